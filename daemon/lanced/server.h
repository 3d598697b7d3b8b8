/* The network side: network threads (server.c), HTTP/1.1 (h1.c, its parser h1parse.c) and
 * HTTP/2 (h2.c), connections (conns.c), the accepting thread (accept.c), the take and
 * object-store threads (dispatch.c) and systemd (notify.c). */
#ifndef LANCED_SERVER_H
#define LANCED_SERVER_H
#include "lanced.h"
#include "config.h"
#include <pthread.h>
#include <stdatomic.h>

struct ld_req;
/* An HTTP/1.1 connection's input buffer: its request line and headers must fit in it (a
 * request line over it is a 414, headers a 431). 32 KiB holds a GET URL of up to ~28 KiB
 * (docs/api.md); longer id lists travel in POST bodies, which stream through it. */
#define LD_CONN_MEMORY (32u * 1024)

/* ---- h1parse.c: an HTTP/1.1 request's head and chunked framing (RFC 9112), strictly ---- */
#define LD_H1_MAX_FIELDS     100  /* header fields a request may send (431 beyond) */
#define LD_H1_CHUNK_LINE_MAX 4096 /* a chunk-size line with its extensions, or a trailer line */
struct ld_h1_head {
  const char *method, *target; /* NUL-terminated in the parsed buffer */
  int minor;                   /* HTTP/1.<minor>: 0 or 1 */
  struct {
    const char *name, *value;
  } fields[LD_H1_MAX_FIELDS];
  int nfields;
  bool has_length, chunked; /* the body's framing: Content-Length (length), or chunked */
  uint64_t length;
  int hosts;
  bool close, keep_alive; /* Connection: close / keep-alive */
  bool expect_continue;
};
/* Where the head in buf[0..len) ends (its empty line included): its length, 0 when it is not
 * all in yet (*scan: where to resume, 0 at first), -1 with e filled (a bare LF). */
long ld_h1_head_end(const char *buf, size_t len, size_t *scan, struct ld_err *e);
/* A whole head (ld_h1_head_end's) parsed in place into h: 0, or -1 with e filled (400, 431,
 * 505): a malformed line, a byte not allowed, or framing a proxy could read otherwise. */
int ld_h1_parse_head(char *buf, size_t len, struct ld_h1_head *h, struct ld_err *e);
const char *ld_h1_field(const struct ld_h1_head *h, const char *name); /* first, case-insensitive; NULL */
/* A chunk-size line at p[0..len): 1 with *size and *used (its bytes, CRLF included), 0 when
 * it is not all in, -1 with e filled. */
int ld_h1_chunk_size(const char *p, size_t len, uint64_t *size, size_t *used, struct ld_err *e);
/* A trailer line: 1 a field (*used), 2 the empty line ending the message, 0 not all in, -1 bad. */
int ld_h1_trailer_line(const char *p, size_t len, size_t *used, struct ld_err *e);


/* ---- notify.c: systemd (libsystemd) ------------------------------------------------------- */
void ld_notify(const char *state); /* no-op unless $NOTIFY_SOCKET is set */
uint64_t ld_watchdog_usec(void);   /* WatchdogSec= in µs, 0 when no watchdog is asked for */
/* Sockets passed by a .socket unit (sd_listen_fds) into fds[0..max); how many (0 = none). */
int ld_listen_fds(int *fds, int max);


/* ---- server.c: listeners, network threads, admission ------------------------------------ */
int ld_server_start(const struct ld_config *c, int rootfd);
/* A network thread: its loop (lnc_loop: one io_uring wait for new connections, its HTTP/1.1
 * and HTTP/2 sockets' epoll fds and device reads alike) and its open connections (counted by
 * accept.c when it hands one over, uncounted by h1.c or h2.c when they close it). */
struct ld_pending_conn;
struct h2_conn;
struct ld_h1_conn;
#define LD_LINGER_MAX 32 /* sockets lingering per network thread (conns.c) */
struct ld_linger {
  int fd;
  double until;
  uint64_t dropped;
};
struct ld_net {
  int conns;
  int index;
  pthread_t thread;
  bool started;
  int wake_fd; /* eventfd: connections queued, or stop */
  atomic_int stop;
  pthread_mutex_t lock;            /* guards queue and loop_state */
  pthread_cond_t loop_cv;          /* signalled when loop_state leaves 0 */
  int loop_state;                  /* the thread's loop: 0 starting, 1 running, -1 failed to start */
  struct ld_pending_conn *queue;   /* sockets accepted for this thread, not yet served */
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
   * carries its sockets' waits and the device reads of its tasks, and its engine worker. */
  lnc_loop *loop;
  lnc_worker *worker;
  /* Answers back from tasks and take threads, for the thread to send (server.c
   * ld_req_resume): from other threads (under lock), from this thread's own loop tasks. */
  struct ld_req *resumed, *resumed_here;
  /* h1.c: the thread's HTTP/1.1 connections, on their own epoll fd. */
  int h1_epfd;
  struct ld_h1_conn *h1_conns;
  double h1_next_sweep;
  /* h2.c: the thread's HTTP/2 connections (and new ones whose first bytes are awaited), on
   * their own epoll fd. */
  int h2_epfd;
  struct h2_conn *h2_conns;
  double h2_next_sweep;
};


/* Whether n's state may be touched here: on n's own thread, or once n was told to stop
 * (its thread then closes what is left as it ends). Asserted by the code
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
/* A connection waiting for a request (h1.c: from its accept, or its last answer; h2.c: its
 * first bytes awaited), under the header deadline and evicted first over connection_limit
 * (closed by shutdown: its owner sees the end and closes it). NULL: untracked (no memory). */
struct ld_conn *ld_conn_track_fd(struct ld_net *n, int fd, double since);
void ld_conn_untrack_fd(struct ld_net *n, struct ld_conn *k); /* NULL: nothing */
/* Its request's head is in (out of the waiting list: never closed for room or a deadline);
 * a body to come (under the deadline again until it is in); its answer is out (waiting again). */
void ld_conn_request_started(struct ld_net *n, struct ld_conn *k);
void ld_conn_body_started(struct ld_net *n, struct ld_conn *k);
void ld_conn_request_done(struct ld_net *n, struct ld_conn *k);
/* How long a request's route ran on its thread, past which its connection is heavy (h1.c; its
 * next requests go to take threads when its thread is crowded, server.c crowded). */
#define LD_HEAVY_ROUTE_S 1e-3
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
 * dropping what the client still sends, so it gets the answer rather than a reset. Takes fd
 * (closed at once when too many linger). */
void ld_linger_add(struct ld_net *n, int fd);
void ld_linger_service(struct ld_net *n);
uint32_t ld_conn_addr_bucket(const struct sockaddr *sa);
bool ld_conn_addr_admit(uint32_t bucket, uint64_t cap); /* counts it, or false over cap */
void ld_conn_addr_release(uint32_t bucket);
/* Closed by the header deadline / to make room, summed over threads (metrics). */
void ld_server_conn_stats(uint64_t *header_timeouts, uint64_t *evicted);
/* accept.c -> a network thread: queues socket fd (ownership passes) and wakes the thread,
 * which serves it (h2.c's sniff, then HTTP/2 or h1.c). */
void ld_net_hand(struct ld_net *n, int fd, const void *addr, unsigned addrlen);
/* Wakes n's loop (from another thread), e.g. after queueing an answer back to it. */
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
/* Stops accepting and the network threads, which close their connections (every request
 * completed first). The ld_nets stay until ld_server_free, after the take threads are
 * joined: one may still wake its network thread after its last resume. */
void ld_server_stop(void);
void ld_server_free(void);


/* ---- server.c: a request's life, whichever protocol carried it ------------------------------
 * HTTP/1.1 requests live on their connections (h1.c), HTTP/2 ones on their streams (h2.c);
 * both are made, admitted, run, answered and finished by these, on their network thread
 * (ld_req_resume from any). */
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
/* An HTTP/1.1 request's headers are in (its connection no longer waiting): shutting down,
 * over the connection or in-flight limits, a declared body (cl: its Content-Length, or NULL)
 * over max_body_bytes: e filled and its status returned; 0 when it goes on. */
int ld_req_admit_headers(struct ld_net *n, struct ld_req *r, bool body_coming, const char *cl, struct ld_err *e);
void ld_req_take_body(struct ld_req *r, const char *upload, size_t n);
void ld_req_body_release(struct ld_req *r);
int ld_req_admit_body(struct ld_req *r, struct ld_err *e);                       /* the body is in: 0, or -1 with e filled */
int ld_req_run(struct ld_net *n, struct ld_req *r);                              /* 0: answered in r->out; 1: ld_req_resume later */
void ld_req_resume(struct ld_req *r);                                            /* r->out is its answer (stage ANSWERED) */
void ld_req_answered(struct ld_req *r, size_t len);                              /* r->out queued to its client, len bytes */
void ld_req_finish(struct ld_req *r, const struct sockaddr *addr, bool aborted); /* counted and freed */
/* The count of connections open (delta +1 / -1: h1.c and h2.c as they open and close them). */
void ld_server_count_conn(int delta);


/* ---- h1.c: HTTP/1.1 connections ------------------------------------------------------------ */
int ld_h1_start(struct ld_net *n); /* the thread's epoll fd; -1 on failure */
/* A socket accepted for n, served as HTTP/1.1 from here (on n's thread; ownership passes). */
void ld_net_add_http1(struct ld_net *n, int fd, const struct sockaddr *addr, unsigned addrlen, double accepted);
void ld_h1_service(struct ld_net *n);                           /* its epoll fd is ready */
int ld_h1_sweep(struct ld_net *n, const struct ld_limits *lim); /* deadlines; ms until the next (-1 none) */
void ld_h1_answer_back(struct ld_req *r);                       /* r->out of a request back from elsewhere */
void ld_h1_stop(struct ld_net *n);                              /* closes what is left */
const char *ld_h1_header(const struct ld_h1_conn *c, const char *name);
const char *ld_h1_arg(const struct ld_h1_conn *c, const char *name);
const char *ld_h1_arg_twice(const struct ld_h1_conn *c);
bool ld_h1_heavy(const struct ld_h1_conn *c); /* its last request's route ran past LD_HEAVY_ROUTE_S */


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
 * or serving it; 0 when its first bytes are not HTTP/2's preface (the caller serves it as
 * HTTP/1.1). */
int ld_h2_sniff(struct ld_net *n, int fd, const struct sockaddr *addr, unsigned addrlen, double accepted);
void ld_h2_service(struct ld_net *n);                           /* its epoll fd is ready */
int ld_h2_sweep(struct ld_net *n, const struct ld_limits *lim); /* deadlines; ms until the next (-1 none) */
void ld_h2_answer_back(struct ld_req *r);                       /* r->out of a request back from elsewhere */
const char *ld_h2_header(const struct ld_h2_stream *st, const char *name);
const char *ld_h2_arg(const struct ld_h2_stream *st, const char *name);
const char *ld_h2_arg_twice(const struct ld_h2_stream *st);
/* A query string split into at most max parameters in place, decoded as form values are ('+'
 * is a space, then percent-decoding; empty names dropped); *twice: a name given twice, or
 * ld_query_too_many when there are more than max (the rest would be dropped unseen, an ids
 * among them), or NULL. Returns how many were kept (tests/fuzz/fuzz_grpc.c fuzzes it).
 * HTTP/1.1 splits its queries so too, with the same bound. */
#define LD_QUERY_MAX_PARAMS 64
extern const char ld_query_too_many[];
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
