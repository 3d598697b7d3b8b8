/* lanced internals: one header for the daemon's modules (config, log, paths, service,
 * server, routes, rows, connect, pbjson, protocols, metrics, notify). Every non-static symbol
 * is ld_-prefixed; each section names the file that implements it. */
#ifndef LANCED_H
#define LANCED_H
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lance.h"
#include "util/assert.h"
#include "util/parse.h"

#define LD_VERSION    "0.1.0"
#define LD_MAX_LISTEN 16
/* libmicrohttpd's memory per connection: the request line, headers and reply headers live
 * here, and MHD zeroes the whole pool between the requests of a keep-alive connection, so
 * its size is paid on every request. 32 KiB holds a GET URL of up to ~16 KiB (docs/api.md);
 * longer id lists travel in POST bodies, which are streamed out of it. */
#define LD_CONN_MEMORY (32u * 1024)

/* ---- log.c: one line per event on stderr ---------------------------------------------- */
enum { LD_LOG_ERROR,
       LD_LOG_WARN,
       LD_LOG_INFO,
       LD_LOG_DEBUG };
extern int ld_log_level; /* read racily by design: a stale level for one line is harmless */
void ld_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int ld_log_level_parse(const char *s); /* -1 when unknown */
const char *ld_log_level_name(int level);

/* ---- config.c: lanced.conf and the command line ----------------------------------------- */
enum { LD_IO_BUFFERED,
       LD_IO_DIRECT };
enum { LD_REP_ALWAYS,
       LD_REP_NEVER,
       LD_REP_MAX };

#define LD_MAX_MOUNTS 16
struct ld_config {
  char root[PATH_MAX];
  char listen[LD_MAX_LISTEN][256];
  int nlisten;
  int workers;
  int take_threads; /* threads that run takes off the network threads */
  /* Object-store roots: `mount = NAME=s3://bucket/prefix`, served as /files/NAME/...; the
   * S3 settings are shared by every mount (unset strings: AWS's environment variables). */
  struct ld_mount {
    char name[64];
    char url[1024];
  } mounts[LD_MAX_MOUNTS];
  int nmounts;
  int store_threads; /* per mount: threads for its requests that may not run on a loop */
  char s3_endpoint[512], s3_region[64], s3_access_key_id[256], s3_secret_access_key[256];
  char s3_session_token[4096];
  int s3_addressing; /* enum lnc_s3_addressing */
  uint64_t s3_merge_gap, s3_max_parallel, s3_timeout_ms, s3_revalidate_ms;
  uint64_t s3_cache_budget, s3_cache_block; /* the page cache of fetched blocks */
  uint64_t cache_budget;
  int io_mode;
  int rep_policy;
  uint64_t rep_max_bytes;
  uint64_t max_ids_per_request;
  uint64_t max_body_bytes;
  uint64_t max_response_bytes;
  uint64_t request_timeout_ms;
  uint64_t revalidate_ms;        /* recheck cached files / a dataset's latest at most this often */
  uint64_t loop_max_ids;         /* takes of more ids go to a take thread (0 = none do) */
  uint64_t connection_limit;     /* 0 = sized from RLIMIT_NOFILE at start-up */
  uint64_t header_timeout_ms;    /* client_header_timeout_ms: headers due within this */
  uint64_t max_conns_per_client; /* max_connections_per_client (0 = no cap) */
  uint64_t max_inflight;
  int log_level;
  bool request_log;
  char config_path[PATH_MAX]; /* "" when none */
  bool check_only;            /* --check-config */
};

void ld_config_defaults(struct ld_config *c);
/* Reads `key = value` lines into c; returns 0, or -1 with a message naming file and line. */
int ld_config_load(struct ld_config *c, const char *path, char *msg, size_t msglen);
/* Parses argv: --config is loaded first, the other flags override it. Returns 0, 1 when
 * --help/--version was printed (exit 0), or -1 with a message. */
int ld_config_from_args(struct ld_config *c, int argc, char **argv, char *msg, size_t msglen);
/* Sizes what depends on the descriptor limit (connection_limit 0 = auto), after raising the
 * soft RLIMIT_NOFILE to the hard one. */
void ld_config_fit_fds(struct ld_config *c);
/* Checks values that only make sense together (root is a directory, listen parses, ...). */
int ld_config_validate(const struct ld_config *c, char *msg, size_t msglen);
/* Splits "HOST:PORT", "[v6]:PORT" or ":PORT"; returns 0 or -1. host gets "" for any. */
int ld_split_hostport(const char *s, char *host, size_t hostlen, unsigned *port);

/* The limits requests read; replaced as a whole on SIGHUP (readers take the lock briefly). */
struct ld_limits {
  uint64_t max_ids, max_body, max_response, timeout_ms, connection_limit, max_inflight;
  uint64_t header_timeout_ms, max_conns_per_client;
  bool request_log;
};
void ld_limits_set(const struct ld_config *c);
struct ld_limits ld_limits_get(void);

/* ---- errors shared by every route --------------------------------------------------------- */
struct ld_err {
  int http;         /* HTTP status for the REST routes */
  const char *code; /* stable code string: "invalid_argument", "not_found", ... */
  char message[600];
};
/* What went wrong, by name; errors.c's table gives each its code string, HTTP status and
 * Connect code, so no call site spells a status or a code. */
enum ld_kind {
  LD_INVALID,       /* 400 invalid_argument */
  LD_OUT_OF_RANGE,  /* 400 out_of_range */
  LD_NOT_FOUND,     /* 404 not_found */
  LD_CORRUPT,       /* 422 corrupt_file */
  LD_UNSUPPORTED,   /* 422 unsupported */
  LD_TOO_LARGE,     /* 413 limit_exceeded */
  LD_EXHAUSTED,     /* 503 resource_exhausted: busy or out of memory, retry */
  LD_IO,            /* 503 io_error */
  LD_INTERNAL,      /* 500 internal */
  LD_FORBIDDEN,     /* 403 permission_denied */
  LD_UNAVAILABLE,   /* 503 unavailable */
  LD_DEADLINE,      /* 504 deadline_exceeded */
  LD_UNIMPLEMENTED, /* 501 unimplemented */
  LD_METHOD,        /* 405 method_not_allowed */
  LD_RATE_LIMITED,  /* 429 resource_exhausted (Connect: a limit the request is over) */
  LD_MEDIA_TYPE,    /* 415 unsupported_media_type */
  LD_KIND_COUNT
};
/* Fills e; returns its HTTP status. */
int ld_errf(struct ld_err *e, enum ld_kind kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Maps a liblance error onto an HTTP status and code (errors.c, the one table of codes). */
int ld_err_from_lnc(struct ld_err *e, const struct lnc_error *le);
/* The Connect code for one of our codes ("corrupt_file" -> "data_loss"; unknown -> internal). */
const char *ld_connect_code(const char *name);

/* ---- framing.c: RFC 9112 §6.3 framing checks before a body is read ------------------------- */
struct MHD_Connection;
/* 0, or -1 with e filled (400 or 411): the request's framing is ambiguous or unsupported. */
int ld_framing_check(struct MHD_Connection *c, const char *version, struct ld_err *e);
/* MHD_OPTION_URI_LOG_CALLBACK: notes the request line's raw URI for ld_framing_check. */
void *ld_framing_uri_seen(void *cls, const char *uri, struct MHD_Connection *c);

/* ---- paths.c: relative path to descriptor, never outside the root ------------------------ */
/* Rejects what is not a plain relative path (.., absolute, NUL, control bytes, empty
 * segments), then opens it with openat2(RESOLVE_BENEATH). Returns an fd (caller owns it) or
 * -1 with e filled. */
int ld_path_check(const char *rel, struct ld_err *e);
int ld_path_open(int rootfd, const char *rel, struct ld_err *e);
/* The same for a directory ("" = the root itself, a new descriptor). */
int ld_path_open_dir(int rootfd, const char *rel, struct ld_err *e);

/* ---- listing.c: GET /files/ and /files/<dir>/ --------------------------------------------- */
struct ld_req;
struct ld_response;
void ld_listing_set_root(int rootfd);
size_t ld_listing_count_served(int rootfd); /* datasets and *.lance files in the root or one level down (0 or 1+) */
void ld_listing_handle(struct ld_req *r, const char *rel, struct ld_response *out);

/* ---- service.c: the single place that calls into liblance --------------------------------- */
int ld_service_init(const struct ld_config *c);
/* Object-store mounts: how many, the i-th one's name, and the one rel is below (-1: none). */
int ld_service_mounts(void);
const char *ld_service_mount_name(int i);
int ld_service_mount_of(const char *rel);
/* A request of mount m (-1: none, always 0) begins waiting on its store (in the engine, or
 * queued for its threads): -1 and a 503 in e when the mount has its share of max_inflight
 * (max_inflight / (mounts + 1)) waiting already. Each 0 is paired with a leave. */
int ld_service_mount_enter(int m, struct ld_err *e);
void ld_service_mount_leave(int m);
void ld_service_reload(const struct ld_config *c); /* applies what can change live (budget, shares) */
void ld_service_shutdown(void);
void ld_service_stats(struct lnc_engine_stats *out);
enum ld_block { LD_BLOCK_NO = 0,
                LD_BLOCK_DISK = 1,    /* a take thread */
                LD_BLOCK_STORE = 2 }; /* + mount index: a thread of that mount's pool */
/* How one request calls the service, carried in the request (struct ld_req's call): set by
 * whoever runs it — its network thread, a take or object-store thread — before ld_route.
 * nowait (enum lnc_nowait): NEVER = the search cache and page cache only; RING = device
 * reads park the current loop task; OFF = may wait. would_block is the service's answer: the
 * attempt gave up because it needed to wait, and where (enum ld_block). Tasks of one thread
 * interleave, each with its own request, so nothing here is the thread's. */
struct ld_call {
  lnc_worker *worker; /* the running thread's (ld_service_thread_start) */
  int nowait;
  int would_block;
};
/* A thread that routes requests makes its engine worker (and, with loop, a loop: a network
 * thread's, whose tasks' reads park on its io_uring) when it starts, owns them, and frees
 * them with ld_service_thread_stop when it ends. */
int ld_service_thread_start(lnc_loop **loop, lnc_worker **worker, struct ld_err *e);
void ld_service_thread_stop(lnc_loop *loop, lnc_worker *worker);
/* Takes rows of rel — a data file, or a dataset directory (ids = offsets among its live
 * rows) at `version` (NULL = the latest; a version for a file is a 400). max_response (the
 * request's max_response_bytes, 0 = none) bounds the take itself: 413 before copies of rows
 * that must exceed it are built. On success the caller owns schema and array and releases
 * them. stats are added to. */
int ld_service_take(struct ld_call *call, const char *rel, const uint64_t *version, const uint64_t *ids, size_t n,
                    const char *const *cols, size_t ncols, int blobs, uint64_t max_response,
                    struct ArrowSchema *schema,
                    struct ArrowArray *array, struct lnc_take_stats *stats, struct ld_err *e);
/* The version tag `tag` of dataset rel names (LanceDB tags; read anew each time: tags move).
 * 400 for a name Lance would not allow or a path that is no dataset, 404 for no such tag. */
int ld_service_tag(struct ld_call *call, const char *rel, const char *tag, uint64_t *version, struct ld_err *e);
struct ld_file_info {
  int major, minor;  /* file format (a dataset: its data files' format) */
  uint64_t num_rows; /* a dataset: live rows of the version described */
  bool dataset;
  uint64_t ds_version;       /* a dataset: the version described */
  struct ArrowSchema schema; /* caller releases */
  struct lnc_buf describe;   /* caller frees (lnc_buf_free): file or dataset JSON */
};
int ld_service_describe(struct ld_call *call, const char *rel, const uint64_t *version,
                        struct ld_file_info *out, struct ld_err *e);
/* Encodes with the shared liblance encoders (JSON rows, Arrow IPC), appending to out. JSON
 * stops with a 413 once it passes max_len (0 = no bound). */
int ld_service_encode(int format, const struct ArrowSchema *s, const struct ArrowArray *a, size_t max_len,
                      struct lnc_buf *out, struct ld_err *e);
uint64_t ld_service_open_handles(void);

/* ---- metrics.c: Prometheus counters ------------------------------------------------------- */
enum ld_route { LD_R_ROWS,
                LD_R_FILE,
                LD_R_TAKE,
                LD_R_GETFILE,
                LD_R_HEALTHZ,
                LD_R_METRICS,
                LD_R_OTHER,
                LD_R_COUNT };
enum ld_format { LD_F_NONE,
                 LD_F_JSON,
                 LD_F_ARROW,
                 LD_F_PROTO,
                 LD_F_COUNT };
void ld_metrics_request(int route, int format, int status, double seconds);
void ld_metrics_rows(uint64_t rows, const struct lnc_take_stats *st);
void ld_metrics_render(struct lnc_buf *out, uint64_t connections, uint64_t inflight);
const char *ld_format_name(int format);

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
  _Atomic double last_turn;        /* ld_now() at the end of its last iteration */
  /* conns.c: connections with no request in progress, oldest first (this thread's only) */
  struct ld_conn *waiting_head, *waiting_tail;
  int nwaiting;
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
};

/* ---- conns.c: header deadline, idle-first eviction, per-address caps ---------------------
 * Called on the connection's network thread, except the per-address counters (any thread). */
struct ld_conn;
struct sockaddr;
void ld_conn_adding(struct ld_net *n, double accepted); /* the accept time of n's next ld_conn_opened */
void ld_conn_opened(struct ld_net *n, struct MHD_Connection *c, void **socket_ctx);
void ld_conn_closed(struct ld_net *n, void **socket_ctx);
void ld_conn_request_started(struct ld_net *n, struct MHD_Connection *c);
void ld_conn_request_done(struct ld_net *n, struct MHD_Connection *c);
/* Headers in, a body to come: under the deadline again until ld_conn_request_started. */
void ld_conn_body_started(struct ld_net *n, struct MHD_Connection *c);
/* The raw request-line URI noted by framing.c (pointer into MHD's buffer, strlen at the
 * time); ld_conn_raw_uri hands it out once and forgets it (NULL when none was noted). */
void ld_conn_note_uri(struct MHD_Connection *c, const char *uri, size_t len);
const char *ld_conn_raw_uri(struct MHD_Connection *c, size_t *len);
int ld_conn_evict(struct ld_net *n, int count);
/* Connections over `limit`, not counting those already being closed. */
uint64_t ld_conn_excess(uint64_t limit);
/* Closes up to `need` waiting connections oldest first across all threads (unless
 * fresh_too, only ones that have waited 250 ms: a new connection's request is read, not
 * reset): this thread's while its oldest is the oldest anywhere, else it wakes the thread
 * that has the oldest (which does the same in its sweep). Returns how many this thread closed. */
int ld_conn_make_room(struct ld_net *n, struct ld_net *all, int nall, int need, bool fresh_too);
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
void ld_server_quiesce(void); /* stop accepting; in-flight requests go on */
uint64_t ld_server_inflight(void);
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

/* ---- routes.c / rows.c / connect.c: request handling -------------------------------------- */
struct MHD_Connection;
/* A request being served; owned by server.c, freed when MHD reports completion. */
struct ld_response { /* what a handler produces; server.c turns it into MHD */
  int status;
  const char *content_type;
  struct lnc_buf body; /* ownership passes to the response */
  const char *allow;   /* Allow header for 405 */
  int retry_after;     /* seconds; 0 = none */
  bool close;          /* Connection: close after it */
  const char *extra_name, *extra_value;
  const char *content_encoding;           /* "gzip" when body is compressed */
  const char *grpc_status, *grpc_message; /* a gRPC trailers-only answer (connect.c) */
};

/* ---- compress.c: gzip for Connect bodies (zlib) ------------------------------------------- */
/* Inflates a gzip body into out (appended), at most max bytes; 400 / 413 with e filled. */
int ld_gunzip(const struct lnc_buf *in, uint64_t max, struct lnc_buf *out, struct ld_err *e);
/* Whether an Accept-Encoding value takes gzip and body_len is worth compressing. */
bool ld_gzip_wanted(const char *accept_encoding, size_t body_len);
/* The q of the parameters after a media range or coding's name (up to its ','), RFC 9110
 * 12.4.2, in thousandths: "; q=0.5" is 500; 1000 without a q. */
int ld_qvalue(const char *params);
/* The request body as its Content-Encoding says: none or identity, as it is; gzip, inflated in
 * place (bounded by max_body_bytes) the first time, so a request routed again on a take thread
 * keeps it. 0, or -1 with e filled (not gzip, over the limit), or 1 for another coding (e
 * untouched: the caller answers it in its protocol). */
int ld_body_decode(struct MHD_Connection *c, struct ld_req *r, struct ld_err *e);
int ld_gzip(struct lnc_buf *body); /* in place; -1 (body untouched) on failure */
/* Where a request is (server.c / dispatch.c). */
enum ld_stage {
  LD_STAGE_NEW = 0,     /* on its network thread */
  LD_STAGE_TASK,        /* a loop task parked on device reads, connection suspended */
  LD_STAGE_TAKE_THREAD, /* handed to a take thread, connection suspended */
  LD_STAGE_ANSWERED,    /* the take thread produced r->out; the connection resumes */
  LD_STAGE_SENT         /* r->out handed to MHD */
};
struct ld_req {
  int route, format, status;
  int stage; /* enum ld_stage; handed between threads by MHD_resume_connection */
  struct MHD_Connection *conn;
  struct ld_net *net;     /* the network thread that owns conn */
  struct ld_response out; /* the take thread's answer, sent when the connection resumes */
  struct ld_req *next;    /* take queue link */
  double start;
  char method[8];
  char *url;           /* owned copy */
  struct lnc_buf body; /* request body, bounded by max_body */
  bool body_too_big;
  bool body_busy;   /* the bodies being received were over their bytes budget: 503 at its end */
  bool working;     /* counted against max_inflight (server.c admit_work) */
  size_t body_held; /* bytes of its body counted in the bodies' budget, until it is all in */
  bool linger;      /* answered before its body was read: the connection lingers (conns.c) */
  bool framing_bad; /* refused for its framing (framing.c): the connection closes after */
  /* body holds a Content-Encoding: gzip body already inflated: a request re-routed on a take
   * thread (its first attempt would have blocked) must not inflate it again. */
  bool body_inflated;
  struct ld_call call; /* how this attempt calls the service (set before each ld_route) */
  uint64_t rows;
  struct ld_limits lim;
};
void ld_route(struct MHD_Connection *c, struct ld_req *r, struct ld_response *out);
void ld_json_error(struct ld_response *out, const struct ld_err *e);
/* The Connect protocol's error body ({"code","message"}) and its HTTP status. */
void ld_connect_error(struct ld_response *out, const struct ld_err *e);
/* e in the shape r's route speaks: Connect's on /lanced.v1.RowService/, else the REST one. */
void ld_error_for(const struct ld_req *r, struct ld_response *out, const struct ld_err *e);
void ld_rows_handle(struct MHD_Connection *c, struct ld_req *r, const char *rel,
                    struct ld_response *out);
/* The rows route's request parsers on their own (tests/fuzz/fuzz_request.c): the query's ids
 * and columns (either may be NULL), then the body as JSON (kind 1) or a protobuf TakeRequest
 * (kind 2); 0 when everything given parses, else -1 with e filled. */
int ld_rows_parse(const char *ids, const char *columns, const uint8_t *body, size_t len,
                  int kind, uint64_t max_ids, struct ld_err *e);
/* A JSON body's ids, read with the fast path for plain integer arrays or (fast false) by
 * jansson alone: 0 with *ids (malloc'd) and *n, or the HTTP status with e filled. The two must
 * agree on every input (fuzz_request). */
int ld_rows_json_ids(const uint8_t *body, size_t len, uint64_t max_ids, bool fast, uint64_t **ids,
                     size_t *n, struct ld_err *e);
/* Percent-decoding of a path or query value in place (server.c's libmicrohttpd callback); a
 * decoded NUL becomes 0x01, which every parser rejects. Returns the new length. */
size_t ld_url_unescape(char *s);
void ld_file_handle(struct MHD_Connection *c, struct ld_req *r, const char *rel,
                    struct ld_response *out);
/* ?version=N, ?version=<tag> or ?tag=<tag> of dataset rel (files.c): 0 and *out = the version
 * when given, 1 when absent, -1 with e filled when bad. */
int ld_version_arg(struct MHD_Connection *c, struct ld_call *call, const char *rel, uint64_t *out, struct ld_err *e);
/* A request body's tag (NULL: none; protobuf's unset "" is passed as NULL) resolved into
 * *version, which the body may not also give (nonzero): 0, or -1 with e filled. */
int ld_pin_tag(struct ld_call *call, const char *rel, const char *tag, uint64_t *version, struct ld_err *e);
void ld_connect_handle(struct MHD_Connection *c, struct ld_req *r, const char *method,
                       struct ld_response *out);
/* A header value ("" when absent), case-insensitive name. */
const char *ld_header(struct MHD_Connection *c, const char *name);

/* ---- protocols.c: Arrow results → protobuf TakeResponse / FileInfo ------------------------ */
struct ProtobufCMessage;
struct ld_take_result {
  struct ArrowSchema schema;
  struct ArrowArray array;
  struct lnc_take_stats stats;
};
/* Builds and packs a TakeResponse (binary when json is false, proto3 JSON otherwise). */
int ld_proto_take_response(const struct ld_take_result *t, int format, bool json,
                           struct lnc_buf *out, struct ld_err *e);
int ld_proto_file_info(const char *rel, const struct ld_file_info *fi, bool json,
                       struct lnc_buf *out, struct ld_err *e);
/* Arrow format string → readable type ("int64", "list<utf8>"); appended to out. */
void ld_arrow_type_name(const struct ArrowSchema *s, struct lnc_buf *out);

/* ---- pbjson.c: proto3 JSON for protobuf-c messages, driven by their descriptors ---------- */
struct ProtobufCMessageDescriptor;
int ld_pbjson_write(const struct ProtobufCMessage *m, struct lnc_buf *out);
/* Parses JSON text into a new message, owned by the caller and freed with ld_pbjson_free
 * (not protobuf_c_message_free_unpacked: proto3 defaults point at static storage). */
struct ProtobufCMessage *ld_pbjson_read(const struct ProtobufCMessageDescriptor *d,
                                        const char *text, size_t len, char *msg, size_t msglen);
void ld_pbjson_free(struct ProtobufCMessage *m);
/* The name of the first string field of d that holds a NUL byte in the binary message p (one
 * protobuf-c unpacked: it is well formed), or NULL. protobuf-c unpacks a string into a C
 * string, which the NUL would cut short: "a.lance\0/../x" read as "a.lance", while a proxy
 * reading the message sees the whole. Top-level fields (the request messages nest none). */
const char *ld_pb_nul_string(const struct ProtobufCMessageDescriptor *d, const uint8_t *p, size_t len);

/* ---- util.c: byte buffers (struct lnc_buf from lance.h), time, numbers -------------------- */
/* Appends abort on allocation failure: a daemon out of memory for a few KiB of headers or
 * JSON cannot answer anything useful anyway, and it keeps every call site one line. */
void ld_buf_append(struct lnc_buf *b, const void *p, size_t n);
void ld_buf_puts(struct lnc_buf *b, const char *s);
void ld_buf_printf(struct lnc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ld_buf_json_str(struct lnc_buf *b, const char *s, size_t n); /* quoted, escaped */
double ld_now(void);                                              /* monotonic seconds */

#endif
