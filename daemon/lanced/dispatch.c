/* Take threads. A request that reads Lance data is suspended on its network thread
 * (MHD_suspend_connection) and queued here; a take thread — each with its own engine worker
 * and io_uring ring — routes it, keeps the answer in the request, and resumes the
 * connection, whose network thread then sends it. So a request waiting on the disk holds a
 * take thread, never the threads that accept and answer other requests. */
#include "lanced.h"
#include <microhttpd.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t more = PTHREAD_COND_INITIALIZER;
static struct ld_req *head, *tail;
static pthread_t *threads;
static int nthreads;
static bool stopping;
static uint64_t handoffs;
/* Test hook, off unless both variables are set: requests whose URL contains
 * LANCED_TEST_STALL_PATH wait LANCED_TEST_STALL_MS first (on their take thread, or parked
 * on a loop timeout when served by a loop task), standing in for a slow disk so a test can
 * show other requests are answered meanwhile. */
static const char *stall_path;
static long stall_ms;

static void *take_thread(void *arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&lock);
    while (!head && !stopping) pthread_cond_wait(&more, &lock);
    struct ld_req *r = head;
    if (r) {
      head = r->next;
      if (!head) tail = NULL;
    }
    pthread_mutex_unlock(&lock);
    if (!r) return NULL; /* stopping and nothing left */
    long ms = ld_test_stall_ms(r->url);
    if (ms) {
      struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
      nanosleep(&ts, NULL);
    }
    ld_route(r->conn, r, &r->out);
    r->stage = LD_STAGE_ANSWERED;
    MHD_resume_connection(r->conn); /* the network thread calls on_request again and sends */
    ld_net_wake(r->net);
  }
}

long ld_test_stall_ms(const char *url) {
  return stall_path && url && strstr(url, stall_path) ? stall_ms : 0;
}

int ld_dispatch_start(int n) {
  const char *sp = getenv("LANCED_TEST_STALL_PATH"), *sm = getenv("LANCED_TEST_STALL_MS");
  if (sp && *sp && sm) {
    stall_path = sp;
    stall_ms = strtol(sm, NULL, 10);
    ld_log(LD_LOG_WARN, "test hook: requests for %s stall %ld ms", stall_path, stall_ms);
  }
  threads = calloc((size_t)n, sizeof *threads);
  if (!threads) return -1;
  stopping = false;
  for (int i = 0; i < n; i++) {
    if (pthread_create(&threads[i], NULL, take_thread, NULL)) {
      ld_log(LD_LOG_ERROR, "could not start take thread %d", i);
      ld_dispatch_stop();
      return -1;
    }
    nthreads++;
  }
  return 0;
}

uint64_t ld_dispatch_handoffs(void) { return __atomic_load_n(&handoffs, __ATOMIC_RELAXED); }

void ld_dispatch(struct ld_req *r) {
  __atomic_add_fetch(&handoffs, 1, __ATOMIC_RELAXED);
  r->next = NULL;
  pthread_mutex_lock(&lock);
  if (tail)
    tail->next = r;
  else
    head = r;
  tail = r;
  pthread_mutex_unlock(&lock);
  /* Signalled after unlocking: a take thread woken while the lock is still held would only
   * block on it again, one more sleep and wake-up per request. */
  pthread_cond_signal(&more);
}

void ld_dispatch_stop(void) {
  pthread_mutex_lock(&lock);
  stopping = true;
  pthread_cond_broadcast(&more);
  pthread_mutex_unlock(&lock);
  for (int i = 0; i < nthreads; i++) pthread_join(threads[i], NULL);
  free(threads);
  threads = NULL;
  nthreads = 0;
}
