/* The network side: network threads and their libmicrohttpd daemons (server.c), framing
 * checks (framing.c), connections (conns.c), the accepting thread (accept.c), the take and
 * object-store threads (dispatch.c) and systemd (notify.c). */
#ifndef LANCED_SERVER_H
#define LANCED_SERVER_H
#include "lanced.h"
#include "config.h"
#include <pthread.h>
#include <stdatomic.h>

struct ld_req;
/* libmicrohttpd's memory per connection: the request line, headers and reply headers live
 * here, and MHD zeroes the whole pool between the requests of a keep-alive connection, so
 * its size is paid on every request. 32 KiB holds a GET URL of up to ~16 KiB (docs/api.md);
 * longer id lists travel in POST bodies, which are streamed out of it. */
#define LD_CONN_MEMORY (32u * 1024)

/* ---- framing.c: RFC 9112 §6.3 framing checks before a body is read ------------------------- */
struct MHD_Connection;
/* 0, or -1 with e filled (400 or 411): the request's framing is ambiguous or unsupported. */
int ld_framing_check(struct MHD_Connection *c, const char *version, struct ld_err *e);
/* MHD_OPTION_URI_LOG_CALLBACK: notes the request line's raw URI for ld_framing_check. */
void *ld_framing_uri_seen(void *cls, const char *uri, struct MHD_Connection *c);


/* ---- notify.c: systemd (libsystemd) ------------------------------------------------------- */
void ld_notify(const char *state); /* no-op unless $NOTIFY_SOCKET is set */
uint64_t ld_watchdog_usec(void);   /* WatchdogSec= in µs, 0 when no watchdog is asked for */
/* Sockets passed by a .socket unit (sd_listen_fds) into fds[0..max); how many (0 = none). */
int ld_listen_fds(int *fds, int max);


/* ---- server.c: listeners, libmicrohttpd, admission -------------------------------------- */
int ld_server_start(const struct ld_config *c, int rootfd);
/* A network thread: one libmicrohttpd daemon in external-epoll mode driven by the thread's
 * own loop (lnc_loop: one io_uring wait for MHD's epoll fd, new connections and device reads
 * alike), and its open connections (counted by accept.c when it hands one over, uncounted
 * by server.c when MHD closes it). */
struct ld_pending_conn;
struct MHD_Connection;
struct h2_conn;
#define LD_LINGER_MAX 32 /* sockets lingering per network thread (conns.c) */
struct ld_linger {
  int fd;
  double until;
  uint64_t dropped;
};
struct ld_net {
  struct MHD_Daemon *d;
  int conns;
  int index;
  pthread_t thread;
  bool started;
  int wake_fd; /* eventfd: connections queued, or stop */
  atomic_int stop;
  pthread_mutex_t lock;            /* guards queue and loop_state */
  pthread_cond_t loop_cv;          /* signalled when loop_state leaves 0 */
  int loop_state;                  /* the thread's loop: 0 starting, 1 running, -1 failed to start */
  struct ld_pending_conn *queue;   /* sockets accepted for this thread, not yet added to MHD */
  struct lnc_loop_stats published; /* the loop's counters as of its last iteration (atomics) */
  _Atomic double last_turn;        /* lnc_now_s() at the end of its last iteration */
  /* conns.c: connections with no request in progress, oldest first (this thread's only) */
  struct ld_conn *waiting_head, *waiting_tail;
  int nwaiting;                  /* written by the thread, read by the acceptor (atomics) */
  _Atomic double oldest_waiting; /* the head's `since`, 0 when none: read by other threads */
  uint64_t closed_by_sweep;
  uint64_t header_timeouts, evicted;      /* read by metrics (atomics) */
  struct ld_linger linger[LD_LINGER_MAX]; /* refused bodies still arriving (conns.c) */
  int nlinger;
  char linger_sink[65536]; /* where their bytes are read and dropped */
  /* Owned by the thread (ld_service_thread_start), used only on it: its loop, whose io_uring
   * carries MHD's epoll wait and the device reads of its tasks, and its engine worker. */
  lnc_loop *loop;
  lnc_worker *worker;
  /* Set while the thread adds a connection to MHD (server.c add_pending, conns.c): whether
   * MHD reported it started, and its accept time, for the callbacks MHD makes meanwhile. */
  bool add_started;
  double adding_since;
  /* h2.c: the thread's HTTP/2 connections (and new ones whose first bytes are awaited), on
   * their own epoll fd, which the loop waits on beside MHD's; requests answered elsewhere
   * queued back for their streams (guarded by lock). */
  int h2_epfd;
  struct h2_conn *h2_conns;
  struct ld_req *h2_resumed;      /* from other threads (under lock) */
  struct ld_req *h2_resumed_here; /* from this thread's own loop tasks */
  double h2_next_sweep;
};


/* Whether n's state may be touched here: on n's own thread, or once n was told to stop
 * (MHD_stop_daemon then closes what is left from the stopping thread). Asserted by the code
 * that owns a network thread's lists and requests. */
static inline bool ld_net_owned(struct ld_net *n) {
  return n && (pthread_equal(pthread_self(), n->thread) || atomic_load(&n->stop));
}

/* Connections of n in a request now: open minus those waiting for one (a connection just
 * handed over counts until its thread sees it). Any thread; the two counts are read apart,
 * so it is an estimate, never below 0. */
static inline int ld_net_busy(struct ld_net *n) {
  int busy = __atomic_load_n(&n->conns, __ATOMIC_RELAXED) - __atomic_load_n(&n->nwaiting, __ATOMIC_RELAXED);
  return busy < 0 ? 0 : busy;
}

/* ---- conns.c: header deadline, idle-first eviction, per-address caps ---------------------
 * Called on the connection's network thread, except the per-address counters (any thread). */
struct ld_conn;
struct sockaddr;
void ld_conn_adding(struct ld_net *n, double accepted); /* the accept time of n's next ld_conn_opened */
void ld_conn_opened(struct ld_net *n, struct MHD_Connection *c, void **socket_ctx);
void ld_conn_closed(struct ld_net *n, void **socket_ctx);
void ld_conn_request_started(struct ld_net *n, struct MHD_Connection *c);
void ld_conn_request_done(struct ld_net *n, struct MHD_Connection *c);
/* How long the finished request's route ran on its thread; whether the connection's next
 * request should go straight to a take thread (its requests are heavy). */
void ld_conn_note_work(struct MHD_Connection *c, double route_s);
bool ld_conn_heavy(struct MHD_Connection *c);
/* Headers in, a body to come: under the deadline again until ld_conn_request_started. */
void ld_conn_body_started(struct ld_net *n, struct MHD_Connection *c);
/* The raw request-line URI noted by framing.c (pointer into MHD's buffer, strlen at the
 * time); ld_conn_raw_uri hands it out once and forgets it (NULL when none was noted). */
void ld_conn_note_uri(struct MHD_Connection *c, const char *uri, size_t len);
const char *ld_conn_raw_uri(struct MHD_Connection *c, size_t *len);
/* A socket h2.c holds before it is MHD's or HTTP/2's (its first bytes awaited), tracked as a
 * waiting connection until untracked; NULL: untracked (no memory). */
struct ld_conn *ld_conn_track_fd(struct ld_net *n, int fd, double since);
void ld_conn_untrack_fd(struct ld_net *n, struct ld_conn *k);
/* Closes up to count of n's oldest waiting connections, whatever their age (room for a request in hand). */
int ld_conn_evict(struct ld_net *n, int count);
/* Connections over `limit`, not counting those already being closed. */
uint64_t ld_conn_excess(uint64_t limit);
/* Closes up to `need` waiting connections oldest first across all threads (unless
 * fresh_too, only ones that have waited 250 ms: a new connection's request is read, not
 * reset): this thread's while its oldest is the oldest anywhere, else it wakes the thread
 * that has the oldest (which does the same in its sweep). Returns how many this thread closed. */
int ld_conn_make_room(struct ld_net *n, struct ld_net *all, int nall, int need, bool fresh_too);
/* Whether a thread other than n has a connection waiting for a request; wakes the first such
 * thread, whose sweep makes room under connection_limit. */
bool ld_conn_wake_waiting_elsewhere(struct ld_net *n, struct ld_net *all, int nall);
int ld_conn_sweep(struct ld_net *n, const struct ld_limits *lim, struct ld_net *all, int nall);
/* Lingering close for a connection answered before its body was read: keeps reading and
 * dropping what the client still sends, so it gets the answer rather than a reset. */
void ld_linger_add(struct ld_net *n, struct MHD_Connection *c);
void ld_linger_service(struct ld_net *n);
uint32_t ld_conn_addr_bucket(const struct sockaddr *sa);
bool ld_conn_addr_admit(uint32_t bucket, uint64_t cap); /* counts it, or false over cap */
void ld_conn_addr_release(uint32_t bucket);
/* Closed by the header deadline / to make room, summed over threads (metrics). */
void ld_server_conn_stats(uint64_t *header_timeouts, uint64_t *evicted);
/* accept.c -> a network thread: queues socket fd (ownership passes) and wakes the thread,
 * which adds it to its MHD daemon itself (MHD calls belong to the daemon's thread). */
void ld_net_hand(struct ld_net *n, int fd, const void *addr, unsigned addrlen);
/* Wakes n's loop (from another thread), e.g. after resuming one of its connections: MHD's own
 * signal of a resumption does not reach a loop waiting on MHD's epoll fd from outside. */
void ld_net_wake(struct ld_net *n);
void ld_server_quiesce(void); /* stop accepting, close the listeners; in-flight requests go on */
uint64_t ld_server_inflight(void);
uint64_t ld_server_crowded_handoffs(void); /* heavy requests sent to take threads off a crowded thread */
uint64_t ld_server_unsent_bytes(void);     /* answers queued, not yet taken by their clients */
/* Whether every network thread finished a loop iteration within max_age_s (the watchdog pings
 * only then), and the longest a loop may wait per iteration (set before ld_server_start). */
bool ld_server_loops_turning(double max_age_s);
void ld_server_set_max_wait_ms(int ms);
uint64_t ld_server_connections(void);
/* Open connections of each network thread into out[0..max); returns how many threads. */
int ld_server_net_conns(int *out, int max);
/* The network threads' loop counters, summed (each thread publishes its own per iteration). */
void ld_server_loop_stats(struct lnc_loop_stats *sum);
/* Stops accepting, the network threads and their daemons (every request completed: MHD
 * aborts on a suspended connection). The ld_nets stay until ld_server_free, after the take
 * threads are joined: one may still wake its network thread after its last resume. */
void ld_server_stop(void);
void ld_server_free(void);


/* ---- server.c: a request's life, whichever protocol carried it ------------------------------
 * HTTP/1.1 requests live in libmicrohttpd's callbacks (server.c), HTTP/2 ones on their streams
 * (h2.c); both are made, admitted, run, answered and finished by these, on their network
 * thread (ld_req_resume from any). */
struct sockaddr;
struct ld_req *ld_req_new(const char *url, const char *method); /* counted in flight; NULL: no memory */
/* Health and metrics (/healthz, /metrics, gRPC's Health/Check): answered whatever the load,
 * never refused as busy, never handed to a thread. */
bool ld_req_cheap(const struct ld_req *r);
/* Headers in, before any body: 503 (e filled, its status returned) when the server is busy —
 * over_conns: the connection limit found no room (HTTP/1.1's count); else max_inflight for a
 * request without a body (counted at work from here), or the unsent answers' memory — and 413
 * when a declared Content-Length is over max_body_bytes; 0 when neither. */
int ld_req_refuse_busy(struct ld_req *r, bool body_coming, bool over_conns, struct ld_err *e);
int ld_req_refuse_declared(const struct ld_req *r, const char *cl, struct ld_err *e);
void ld_req_take_body(struct ld_req *r, const char *upload, size_t n);
void ld_req_body_release(struct ld_req *r);
int ld_req_admit_body(struct ld_req *r, struct ld_err *e);                       /* the body is in: 0, or -1 with e filled */
int ld_req_run(struct ld_net *n, struct ld_req *r);                              /* 0: answered in r->out; 1: ld_req_resume later */
void ld_req_resume(struct ld_req *r);                                            /* r->out is its answer (stage ANSWERED) */
void ld_req_answered(struct ld_req *r, size_t len);                              /* r->out queued to its client, len bytes */
void ld_req_finish(struct ld_req *r, const struct sockaddr *addr, bool aborted); /* counted and freed */
/* A socket accepted for n, handed to its libmicrohttpd daemon (on n's thread); and the count of
 * connections open (delta +1 / -1) for those served outside it (h2.c). */
void ld_net_add_http1(struct ld_net *n, int fd, const struct sockaddr *addr, unsigned addrlen, double accepted);
void ld_server_count_conn(int delta);


/* ---- h2.c: HTTP/2 with prior knowledge (h2c), framed by libnghttp2 ----------------------- */
struct ld_h2_stream;
int ld_h2_start(struct ld_net *n); /* the thread's epoll fd; -1 on failure */
struct ld_h2_stats {
  uint64_t open;            /* HTTP/2 connections open now */
  uint64_t refused;         /* streams refused (REFUSED_STREAM: over the streams a connection may have) */
  uint64_t protocol_errors; /* connections ended by libnghttp2 (floods, rapid reset, malformed frames) */
  uint64_t stalled;         /* streams reset for making no progress for request_timeout_ms */
};
void ld_h2_stats(struct ld_h2_stats *s); /* any thread (metrics) */
void ld_h2_stop(struct ld_net *n);       /* closes what is left (every request finished) */
/* A connection accepted for n (on n's thread): 1 when HTTP/2 keeps it, awaiting its first bytes
 * or serving it; 0 when its first bytes are not HTTP/2's preface (the caller hands it to MHD). */
int ld_h2_sniff(struct ld_net *n, int fd, const struct sockaddr *addr, unsigned addrlen, double accepted);
void ld_h2_service(struct ld_net *n, bool events);              /* events: the epoll fd is ready; also resumed answers */
int ld_h2_sweep(struct ld_net *n, const struct ld_limits *lim); /* deadlines; ms until the next (-1 none) */
void ld_h2_resume(struct ld_req *r);                            /* from any thread */
const char *ld_h2_header(const struct ld_h2_stream *st, const char *name);
const char *ld_h2_arg(const struct ld_h2_stream *st, const char *name);
const char *ld_h2_arg_twice(const struct ld_h2_stream *st);
/* A query string split into at most max parameters in place, decoded as libmicrohttpd decodes
 * them ('+' is a space, then percent-decoding; empty names dropped); *twice: a name given twice
 * (or NULL). Returns how many (tests/fuzz/fuzz_grpc.c fuzzes it). */
int ld_h2_split_query(char *query, const char **keys, const char **vals, int max, const char **twice);


/* ---- accept.c: one thread accepting on all listening sockets ------------------------------
 * Each connection goes to the ld_net with the fewest connections; beyond `hard` open
 * connections new ones are closed at once. fds and nets must outlive ld_acceptor_stop(). */
int ld_acceptor_start(const int *fds, int nfds, struct ld_net *nets, int nnets, uint64_t hard);
void ld_acceptor_stop(void);                   /* stops accepting (idempotent); queued connections stay queued */
uint64_t ld_acceptor_refused_per_client(void); /* refused over max_connections_per_client */
uint64_t ld_acceptor_hard_limit(void);         /* open connections past which new ones are refused */


/* ---- dispatch.c: take threads, so requests waiting on the disk never hold a network thread */
struct ld_req;
/* Pools: take threads (the disk) and, per mount, `store_threads` object-store threads, so a
 * slow or dead endpoint holds only the threads of its own mount. A request an object-store
 * thread takes after it is store_wait_ms old (s3_timeout_ms: the store has been that slow) is
 * answered 503 without being run. */
int ld_dispatch_start(int threads, int nmounts, int store_threads, uint64_t store_wait_ms);
/* Queues r (its connection already suspended) for a thread of the pool `block` (enum
 * ld_block) names, which routes it, stores the answer in r->out and resumes the connection. */
void ld_dispatch(struct ld_req *r, int block);
uint64_t ld_dispatch_handoffs(void); /* requests queued for a take thread so far */
/* Test hook (LANCED_TEST_STALL_PATH / _MS): how long a request for url stalls first; 0 = not. */
long ld_test_stall_ms(const char *url);
void ld_dispatch_stop(void);   /* after every request has completed */
extern atomic_int ld_draining; /* set by the main thread on SIGTERM, read by network threads */
enum { LD_DRAIN_OPEN = 1,      /* draining: requests still served, each answer closes */
       LD_DRAIN_CLOSED = 2 };  /* about to stop: new requests get 503 at once */
void ld_test_stop_delay(void); /* test hook: LANCED_TEST_STOP_DELAY_MS before the stop */

#endif
