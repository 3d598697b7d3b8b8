/* Connection discipline (issue 14, point 1): deadlines and room that hold whatever a client
 * does.
 *
 * An idle timeout alone would let a client sending one header byte a second keep its
 * connection for ever, and idle keep-alive connections count against the limit like busy
 * ones. Here each network thread keeps the connections that have no request
 * in progress ("waiting": accepted, or answered and kept alive) in one list, oldest first,
 * and its loop (server.c net_main) sweeps it:
 *   - header deadline: a waiting connection gets client_header_timeout_ms, counted from its
 *     accept or its last answer, to complete a request's headers (nginx's
 *     client_header_timeout; it is also the keep-alive idle limit);
 *   - the limit nears: above connection_limit the oldest waiting connections are closed
 *     first, so idle and trickling clients make room for new ones instead of new ones being
 *     refused (health probes and metrics included). Oldest across all threads: each thread
 *     publishes the age of its oldest waiting connection, and a thread that must make room
 *     closes its own only while its own is the oldest, else wakes the thread that holds it
 *     (ld_conn_make_room);
 * and accept.c caps the connections of one client address.
 * Closing = shutdown(2) on the socket: its owner (h1.c, h2.c) sees the end on its next read
 * and closes the connection through its usual path. A connection in a request (headers
 * complete, possibly at work on a loop task or a take thread) is never touched.
 * Ownership: an ld_conn is made (ld_conn_track_fd) and freed (ld_conn_untrack_fd) by the
 * connection's owner on its network thread; lists are that thread's alone. The per-address
 * counters are shared (atomics). */
#include "lanced.h"
#include "config.h"
#include "server.h"
#include "util/list.h"
#include <netinet/in.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct ld_conn {
  struct ld_conn *prev, *next; /* the thread's waiting list, oldest at the head */
  int fd;
  double since; /* accept or last answer */
  bool waiting, closing;
};

/* ---- per-client-address counts ------------------------------------------------------
 * Buckets by a hash of the address: two clients sharing a bucket share one cap, which can
 * only make the cap stricter for them, never looser. */
#define ADDR_BUCKETS 4096
static atomic_int per_addr[ADDR_BUCKETS];

/* The address folded into a bucket: a multiply-xorshift of its 32-bit words (a client picks
 * its port, never its address, so the address alone is hashed). */
uint32_t ld_conn_addr_bucket(const struct sockaddr *sa) {
  uint32_t w[4] = {0};
  size_t nw = 0;
  if (sa->sa_family == AF_INET)
    memcpy(w, &((const struct sockaddr_in *)sa)->sin_addr, 4), nw = 1;
  else if (sa->sa_family == AF_INET6)
    memcpy(w, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16), nw = 4;
  uint64_t h = 0;
  for (size_t i = 0; i < nw; i++) {
    h = (h ^ w[i]) * 0x9E3779B97F4A7C15ull; /* 2^64 / golden ratio (Fibonacci hashing) */
    h ^= h >> 29;
  }
  return (uint32_t)(h % ADDR_BUCKETS);
}

bool ld_conn_addr_admit(uint32_t bucket, uint64_t cap) {
  int now = atomic_fetch_add(&per_addr[bucket], 1) + 1;
  if (cap && (uint64_t)now > cap) {
    atomic_fetch_sub(&per_addr[bucket], 1);
    return false;
  }
  return true;
}

void ld_conn_addr_release(uint32_t bucket) { atomic_fetch_sub(&per_addr[bucket], 1); }

/* Shut down for room or a deadline and not yet closed by their owner: still counted as open,
 * so they are subtracted before deciding how many more must go. */
static atomic_int closing_now;

/* ---- the waiting list ----------------------------------------------------------------- */
static void publish_oldest(struct ld_net *n) {
  atomic_store_explicit(&n->oldest_waiting, n->waiting_head ? n->waiting_head->since : 0.0,
                        memory_order_relaxed);
}

static void unlink_waiting(struct ld_net *n, struct ld_conn *k) {
  LNC_ASSERT(ld_net_owned(n));
  if (!k->waiting) return;
  LNC_LIST_UNLINK(n->waiting_head, n->waiting_tail, k);
  k->waiting = false;
  __atomic_sub_fetch(&n->nwaiting, 1, __ATOMIC_RELAXED); /* read by the acceptor */
  publish_oldest(n);
}

static void append_waiting(struct ld_net *n, struct ld_conn *k, double now) {
  unlink_waiting(n, k);
  LNC_ASSERT(ld_net_owned(n));
  k->since = now;
  LNC_LIST_PUSH_BACK(n->waiting_head, n->waiting_tail, k);
  k->waiting = true;
  __atomic_add_fetch(&n->nwaiting, 1, __ATOMIC_RELAXED);
  publish_oldest(n);
}

struct ld_conn *ld_conn_track_fd(struct ld_net *n, int fd, double since) {
  struct ld_conn *k = calloc(1, sizeof *k);
  if (!k) return NULL;
  k->fd = fd;
  append_waiting(n, k, since > 0 ? since : lnc_now_s());
  return k;
}

void ld_conn_untrack_fd(struct ld_net *n, struct ld_conn *k) {
  if (!k) return;
  unlink_waiting(n, k);
  if (k->closing) atomic_fetch_sub(&closing_now, 1);
  free(k);
}

void ld_conn_request_started(struct ld_net *n, struct ld_conn *k) {
  if (k) unlink_waiting(n, k);
}

void ld_conn_body_started(struct ld_net *n, struct ld_conn *k) {
  if (k && !k->closing) append_waiting(n, k, lnc_now_s());
}

void ld_conn_request_done(struct ld_net *n, struct ld_conn *k) {
  if (k && !k->closing) append_waiting(n, k, lnc_now_s());
}

static void close_conn(struct ld_net *n, struct ld_conn *k) {
  unlink_waiting(n, k);
  k->closing = true;
  atomic_fetch_add(&closing_now, 1);
  if (k->fd >= 0) shutdown(k->fd, SHUT_RDWR);
  n->closed_by_sweep++;
}

/* A waiting connection is closed to make room only once it has waited this long. A client
 * sends its request right after connecting; closed before it is read, the request gets a
 * reset instead of its answer or a 503. (At the limit, with every other connection busy,
 * each new connection, health probes included, was the only one waiting, and the next sweep
 * closed it.) Keep-alive connections of busy clients, back between requests for microseconds,
 * are spared the same way. */
#define LD_EVICT_GRACE_S 0.25

static bool idle_enough(double since, double now) { return since > 0 && now - since >= LD_EVICT_GRACE_S; }

/* Closes up to `count` of this thread's oldest waiting connections, whatever their age (for a
 * request in hand, which outranks a connection that has sent none); returns how many. */
int ld_conn_evict(struct ld_net *n, int count) {
  int done = 0;
  while (done < count && n->waiting_head) {
    close_conn(n, n->waiting_head);
    done++;
  }
  __atomic_add_fetch(&n->evicted, (uint64_t)done, __ATOMIC_RELAXED);
  return done;
}

uint64_t ld_conn_excess(uint64_t limit) {
  uint64_t open = ld_server_connections();
  int closing = atomic_load(&closing_now);
  uint64_t live = closing > 0 && (uint64_t)closing < open ? open - (uint64_t)closing : open;
  return live > limit ? live - limit : 0;
}

/* The thread whose oldest waiting connection is the oldest of all (n on a tie), or NULL;
 * *since_out: when that connection began waiting. */
static struct ld_net *holder_of_oldest(struct ld_net *n, struct ld_net *all, int nall, double *since_out) {
  struct ld_net *best = NULL;
  double best_since = 0;
  for (int i = 0; i < nall; i++) {
    struct ld_net *o = &all[i];
    double since = o == n ? (n->waiting_head ? n->waiting_head->since : 0.0)
                          : atomic_load_explicit(&o->oldest_waiting, memory_order_relaxed);
    if (since > 0 && (!best || since < best_since || (since == best_since && o == n)))
      best = o, best_since = since;
  }
  *since_out = best_since;
  return best;
}

bool ld_conn_wake_waiting_elsewhere(struct ld_net *n, struct ld_net *all, int nall) {
  for (int i = 0; i < nall; i++)
    if (&all[i] != n && atomic_load_explicit(&all[i].oldest_waiting, memory_order_relaxed) > 0) {
      ld_net_wake(&all[i]);
      return true;
    }
  return false;
}

int ld_conn_make_room(struct ld_net *n, struct ld_net *all, int nall, int need, bool fresh_too) {
  int done = 0;
  double now = lnc_now_s();
  while (done < need) {
    double since;
    struct ld_net *o = holder_of_oldest(n, all, nall, &since);
    /* None waiting, or the oldest is still new, and so then is every other. */
    if (!o || (!fresh_too && !idle_enough(since, now))) break;
    if (o != n) { /* its sweep continues from there, and wakes us when ours is the oldest */
      ld_net_wake(o);
      break;
    }
    close_conn(n, n->waiting_head);
    done++;
  }
  __atomic_add_fetch(&n->evicted, (uint64_t)done, __ATOMIC_RELAXED);
  return done;
}

static int clamp_int(uint64_t v) { return v > INT32_MAX ? INT32_MAX : (int)v; }

/* Room under `limit`: connections idle past the grace are closed first. Past half the
 * headroom above the limit (accept.c refuses new connections at its hard cap) room for new
 * connections comes first, and the oldest waiting are closed whatever their age: a flood of
 * fresh idle connections would otherwise fill the headroom within the grace and get every
 * connection after it refused. Returns the excess left. */
static uint64_t make_room_over(struct ld_net *n, uint64_t limit, struct ld_net *all, int nall) {
  uint64_t hard = ld_acceptor_hard_limit(), soft = hard > limit ? (hard - limit) / 2 : 0;
  uint64_t excess = ld_conn_excess(limit);
  if (excess > soft) ld_conn_make_room(n, all, nall, clamp_int(excess - soft), true);
  if ((excess = ld_conn_excess(limit))) ld_conn_make_room(n, all, nall, clamp_int(excess), false);
  return ld_conn_excess(limit);
}

/* The header deadline, and room under connection_limit. Returns the milliseconds until the
 * next deadline (-1: none), for the loop's wait. */
int ld_conn_sweep(struct ld_net *n, const struct ld_limits *lim, struct ld_net *all, int nall) {
  double now = lnc_now_s(), limit_s = (double)lim->header_timeout_ms / 1000.0;
  uint64_t timed_out = 0;
  while (n->waiting_head && now - n->waiting_head->since >= limit_s) {
    close_conn(n, n->waiting_head);
    timed_out++;
  }
  __atomic_add_fetch(&n->header_timeouts, timed_out, __ATOMIC_RELAXED);
  uint64_t excess = make_room_over(n, lim->connection_limit, all, nall);
  if (!n->waiting_head) return -1;
  double left = n->waiting_head->since + limit_s - now;
  /* Over the limit, the oldest here is closed once its grace is over. */
  double grace_left = n->waiting_head->since + LD_EVICT_GRACE_S - now;
  if (excess && grace_left > 0 && grace_left < left) left = grace_left;
  return left <= 0 ? 0 : (int)(left * 1000.0) + 1;
}

/* ---- lingering close (nginx's lingering_close) ------------------------------------------
 * A request refused before its body was read (413: over max_body_bytes) is answered at once
 * and its connection closed; a client still writing the body would then get a reset, which
 * can destroy the 413 before it reads it ("broken pipe", no answer). So the socket is kept
 * (handed over by h1.c) and whatever the client still sends is read and dropped until
 * it stops (end of stream), LD_LINGER_MS pass, or LD_LINGER_BYTES were dropped; then it is
 * closed. At most LD_LINGER_MAX sockets linger per thread; beyond, they close at once. */
#define LD_LINGER_MS    5000 /* nginx's lingering_timeout default */
#define LD_LINGER_BYTES (256ull << 20)

void ld_linger_add(struct ld_net *n, int fd) {
  if (n->nlinger >= LD_LINGER_MAX) {
    close(fd);
    return;
  }
  shutdown(fd, SHUT_WR); /* the answer is all we send: the client sees its end */
  n->linger[n->nlinger++] = (struct ld_linger){.fd = fd, .until = lnc_now_s() + LD_LINGER_MS / 1000.0};
}

void ld_linger_service(struct ld_net *n) {
  char *sink = n->linger_sink; /* every network thread drains into its own */
  double now = lnc_now_s();
  for (int i = 0; i < n->nlinger;) {
    struct ld_linger *l = &n->linger[i];
    bool done = now >= l->until || l->dropped >= LD_LINGER_BYTES;
    for (int k = 0; !done && k < 128; k++) { /* bounded work per iteration: 8 MiB */
      ssize_t r = recv(l->fd, sink, sizeof n->linger_sink, MSG_DONTWAIT);
      if (r > 0)
        l->dropped += (uint64_t)r;
      else if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        break;
      else
        done = true; /* end of stream or error */
    }
    if (done) {
      close(l->fd);
      n->linger[i] = n->linger[--n->nlinger];
    } else {
      i++;
    }
  }
}
