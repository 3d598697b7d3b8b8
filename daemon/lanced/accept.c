/* The acceptor: one thread accepts on every listening socket and hands each connection to
 * the least loaded network thread (open connections, a busy one counting as several idle
 * ones), which serves it on its own loop (ld_net_hand). Letting whichever thread wakes first
 * take a new connection (libmicrohttpd's thread pool, before) often put a few keep-alive
 * clients all on one network thread, and the daemon ran on half the CPUs it was given. */
#include "lanced.h"
#include "config.h"
#include "server.h"
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static pthread_t thread;
static bool running;
static int wake_fd = -1; /* written once to stop the thread */
static const int *lfds;
static int nlfds;
static struct ld_net *nets;
static int nnets;
static uint64_t hard_limit;
static uint64_t refused_per_client;

/* Read by network threads, which may run before the acceptor starts: atomic. */
uint64_t ld_acceptor_hard_limit(void) { return __atomic_load_n(&hard_limit, __ATOMIC_RELAXED); }
uint64_t ld_acceptor_refused_per_client(void) { return __atomic_load_n(&refused_per_client, __ATOMIC_RELAXED); }

/* How many idle connections one connection in a request weighs when placing a new one.
 * Placed by open connections alone, idle keep-alive ones (a client's metadata connection
 * beside its data connections) could put two busy connections on one thread while another
 * idled: a request is run on its connection's thread, so those two then share one CPU (a
 * DataLoader's two workers at 0.7x of the other placement). Placed by busy ones alone, every
 * idle connection went to whichever thread was not serving at that instant, and the busy
 * thread then had none of its own to close for a request over connection_limit. */
#define BUSY_WEIGHT 8

/* The network thread with the least load: open connections plus BUSY_WEIGHT per connection
 * in a request (a connection just handed over counts as busy until its thread sees it); ties
 * go to the lowest index. */
static struct ld_net *least_loaded(void) {
  struct ld_net *best = NULL;
  long best_load = 0;
  for (int i = 0; i < nnets; i++) {
    long load = __atomic_load_n(&nets[i].conns, __ATOMIC_RELAXED) + (long)BUSY_WEIGHT * ld_net_busy(&nets[i]);
    if (!best || load < best_load) best = &nets[i], best_load = load;
  }
  return best;
}

/* Accepts what is queued on fd. Returns false when the thread should back off (out of
 * descriptors): the connection stays queued rather than spinning on accept. */
static bool drain_listener(int fd) {
  for (;;) {
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    int c = accept4(fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (c < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        ld_log(LD_LOG_WARN, "accept: %s; pausing new connections", strerror(errno));
        return false;
      }
      return true; /* EAGAIN, or an error of this one connection */
    }
    /* Beyond the hard cap (above connection_limit, whose excess makes room or gets a 503)
     * a connection is refused outright; so is one over its client
     * address's cap. */
    uint32_t bucket = ld_conn_addr_bucket((struct sockaddr *)&ss);
    if (ld_server_connections() >= hard_limit ||
        !ld_conn_addr_admit(bucket, ld_limits_get().max_conns_per_client)) {
      if (ld_server_connections() < hard_limit) __atomic_add_fetch(&refused_per_client, 1, __ATOMIC_RELAXED);
      close(c);
      continue;
    }
    struct ld_net *n = least_loaded();
    /* Counted here rather than when its network thread takes it, so a burst of accepts
     * spreads before the network threads have seen any of them; h1.c or h2.c takes it off
     * when the connection closes. */
    __atomic_add_fetch(&n->conns, 1, __ATOMIC_RELAXED);
    ld_net_hand(n, c, &ss, sl);
  }
}

static void *acceptor(void *arg) {
  (void)arg;
  struct pollfd pf[LD_MAX_LISTEN + 1];
  for (int i = 0; i < nlfds; i++) pf[i] = (struct pollfd){.fd = lfds[i], .events = POLLIN};
  pf[nlfds] = (struct pollfd){.fd = wake_fd, .events = POLLIN};
  for (;;) {
    int r = poll(pf, (nfds_t)nlfds + 1, -1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 || pf[nlfds].revents) return NULL;
    for (int i = 0; i < nlfds; i++) {
      if (!(pf[i].revents & POLLIN)) continue;
      if (!drain_listener(lfds[i])) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
      }
    }
  }
}

int ld_acceptor_start(const int *fds, int nfds, struct ld_net *n, int nn, uint64_t hard) {
  lfds = fds, nlfds = nfds, nets = n, nnets = nn;
  __atomic_store_n(&hard_limit, hard, __ATOMIC_RELAXED);
  wake_fd = eventfd(0, EFD_CLOEXEC);
  if (wake_fd < 0) return -1;
  if (pthread_create(&thread, NULL, acceptor, NULL)) {
    close(wake_fd);
    wake_fd = -1;
    return -1;
  }
  running = true;
  return 0;
}

void ld_acceptor_stop(void) {
  if (!running) return;
  uint64_t one = 1;
  if (write(wake_fd, &one, sizeof one) < 0) { /* an eventfd write cannot fail here */
  }
  pthread_join(thread, NULL);
  close(wake_fd);
  wake_fd = -1;
  running = false;
}
