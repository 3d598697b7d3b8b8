/* The HTTP server: listening sockets, `workers` network threads, admission (connection and
 * in-flight limits answered with 503 + Retry-After), request bodies, and turning handler
 * results into responses.
 *
 * A network thread is one loop (net_main): its HTTP/1.1 connections' epoll fd (h1.c), its
 * HTTP/2 connections' (h2.c) and the thread's wake eventfd watched through the thread's
 * io_uring (lnc_loop), so one io_uring_enter per iteration both submits the device reads of
 * every request that became ready in that iteration and waits for network events and read
 * completions alike.
 *
 * io_mode direct: a request runs as a loop task (run_task). Where its take reads the device
 * the task parks, the connection is suspended, and the read's completion resumes the task on
 * this same thread, which resumes the connection: no thread hand-off. What would block
 * outside the ring — a file or dataset version not in the search cache yet, blob bytes, a
 * description — goes to a take thread (dispatch.c), as every request did before.
 * io_mode buffered: a request is first tried inline without waiting (RWF_NOWAIT, page
 * cache only); only a miss goes to a take thread. */
#include "lanced.h"
#include "config.h"
#include "service.h"
#include "metrics.h"
#include "request.h"
#include "server.h"
#include "routes.h"
#include "util/buf.h" /* lnc_buf_reserve: a flattened answer that may not fit */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <malloc.h>
#include <unistd.h>

atomic_int ld_draining;

static struct ld_net *nets;
static int nnets; /* network threads started: published with release, read with nets_started() */
static int listen_fds[LD_MAX_LISTEN];
static int nlisten;
static uint64_t inflight, connections;
/* Requests at work: past their body (or without one) and not yet completed; max_inflight
 * bounds these. A request still receiving its body is not one: 256 clients trickling bodies
 * held every slot, so every other request, GETs included, got 503 for as long as they kept
 * sending (each cut at the body deadline, then sent again). Those are bounded instead by
 * connection_limit (they are evicted first, as idle ones are), the body deadline, and
 * body_bytes: the bytes they hold, at most max_inflight x max_body_bytes, the memory the
 * count bounded while it counted them. */
static uint64_t working, body_bytes;
/* Bytes of answers framed and not yet completed (sent, or the connection closed): what
 * slow readers hold, under max_unsent_bytes. unsent_peak: the most since the last trim. */
static uint64_t unsent_bytes, unsent_peak;
/* After a burst of large answers, memory is given back to the system once they are all gone
 * (glibc keeps freed heap below M_TRIM_THRESHOLD per arena, main.c tune_malloc): past this
 * many bytes unsent at once, malloc_trim runs when the count is back to zero. */
#define TRIM_AFTER_UNSENT (64ull << 20)
static bool direct_tasks;      /* io_mode direct: requests run as loop tasks */
static int max_wait_ms = 1000; /* a loop iteration waits at most this long (the watchdog's pace) */

void ld_server_set_max_wait_ms(int ms) { max_wait_ms = ms < 10 ? 10 : ms; }

/* How many of nets[] other threads may look at: network threads read it while start-up is
 * still starting the later ones (TSan saw the plain counter race). */
static int nets_started(void) { return __atomic_load_n(&nnets, __ATOMIC_ACQUIRE); }

bool ld_server_loops_turning(double max_age_s) {
  double now = lnc_now_s();
  int started = nets_started();
  for (int i = 0; i < started; i++)
    if (now - atomic_load(&nets[i].last_turn) > max_age_s) return false;
  return started > 0;
}

void ld_server_conn_stats(uint64_t *header_timeouts, uint64_t *evicted) {
  *header_timeouts = *evicted = 0;
  for (int i = 0, started = nets_started(); i < started; i++) {
    *header_timeouts += __atomic_load_n(&nets[i].header_timeouts, __ATOMIC_RELAXED);
    *evicted += __atomic_load_n(&nets[i].evicted, __ATOMIC_RELAXED);
  }
}

uint64_t ld_server_inflight(void) { return __atomic_load_n(&inflight, __ATOMIC_RELAXED); }
uint64_t ld_server_connections(void) { return __atomic_load_n(&connections, __ATOMIC_RELAXED); }

int ld_server_net_conns(int *out, int max) {
  int n = 0;
  for (int started = nets_started(); n < started && n < max; n++) out[n] = __atomic_load_n(&nets[n].conns, __ATOMIC_RELAXED);
  return n;
}

const char *ld_header_opt(const struct ld_req *r, const char *name) {
  return r->h2 ? ld_h2_header(r->h2, name) : ld_h1_header(r->h1, name);
}

const char *ld_header(const struct ld_req *r, const char *name) {
  const char *v = ld_header_opt(r, name);
  return v ? v : "";
}

const char *ld_arg(const struct ld_req *r, const char *name) {
  return r->h2 ? ld_h2_arg(r->h2, name) : ld_h1_arg(r->h1, name);
}

const char *ld_arg_twice(const struct ld_req *r) { return r->h2 ? ld_h2_arg_twice(r->h2) : ld_h1_arg_twice(r->h1); }

/* Percent-decoding for the path and query values. A decoded NUL would silently cut the
 * string short; it becomes 0x01 instead, which every parser here rejects. */
static int hexval(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

size_t ld_url_unescape(char *s) {
  char *w = s;
  for (char *r = s; *r; r++) {
    int hi, lo;
    if (*r == '%' && (hi = hexval(r[1])) >= 0 && (lo = hexval(r[2])) >= 0) {
      char ch = (char)(hi * 16 + lo);
      *w++ = ch ? ch : 0x01;
      r += 2;
    } else {
      *w++ = *r;
    }
  }
  *w = 0;
  return (size_t)(w - s);
}

/* ---- admission: requests at work, and the bytes of bodies on their way ---------------- */
bool ld_req_cheap(const struct ld_req *r) {
  return !strcmp(r->url, "/healthz") || !strcmp(r->url, "/metrics") || (r->grpc && ld_grpc_is_health(r->url));
}

static bool admit_work(struct ld_req *r, bool check) {
  if (check && (__atomic_load_n(&working, __ATOMIC_RELAXED) >= r->lim.max_inflight ||
                __atomic_load_n(&unsent_bytes, __ATOMIC_RELAXED) >= r->lim.max_unsent))
    return false;
  __atomic_add_fetch(&working, 1, __ATOMIC_RELAXED);
  r->working = true;
  return true;
}

/* Room for n more body bytes of r under max_inflight x max_body_bytes. */
static bool body_room(struct ld_req *r, size_t n) {
  uint64_t cap = r->lim.max_body && r->lim.max_inflight > UINT64_MAX / r->lim.max_body
                     ? UINT64_MAX
                     : r->lim.max_inflight * r->lim.max_body;
  if (__atomic_add_fetch(&body_bytes, n, __ATOMIC_RELAXED) > cap) {
    __atomic_sub_fetch(&body_bytes, n, __ATOMIC_RELAXED);
    return false;
  }
  r->body_held += n;
  return true;
}

/* Its body is in (or dropped): the bytes are the request's own now, or gone. */
void ld_req_body_release(struct ld_req *r) {
  if (r->body_held) __atomic_sub_fetch(&body_bytes, r->body_held, __ATOMIC_RELAXED);
  r->body_held = 0;
}

/* A piece of r's body: kept while it fits max_body_bytes and the bodies' budget, else r is
 * marked for a 413 or a 503 at its end and what it holds is dropped. */
void ld_req_take_body(struct ld_req *r, const char *upload, size_t n) {
  r->bytes_in += n; /* as received, kept or not (the request log) */
  if (r->body_too_big || r->body_busy) return;
  if (r->body.len + n > r->lim.max_body)
    r->body_too_big = true;
  else if (!body_room(r, n))
    r->body_busy = true;
  else {
    ld_buf_append(&r->body, upload, n);
    return;
  }
  lnc_buf_free(&r->body);
  ld_req_body_release(r);
}

/* r's work is over (its answer is built, or it ended): its max_inflight slot is free. */
static void work_done(struct ld_req *r) {
  if (!r->working) return;
  r->working = false;
  __atomic_sub_fetch(&working, 1, __ATOMIC_RELAXED);
}

/* r's answer is queued: its bytes wait on the client, counted under max_unsent_bytes. */
static void unsent_queued(struct ld_req *r, size_t len) {
  r->unsent = len;
  uint64_t now = __atomic_add_fetch(&unsent_bytes, len, __ATOMIC_RELAXED);
  uint64_t peak = __atomic_load_n(&unsent_peak, __ATOMIC_RELAXED);
  while (now > peak && !__atomic_compare_exchange_n(&unsent_peak, &peak, now, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

/* r completed (sent, or its connection closed): its answer's bytes are freed. The last answer
 * of a large burst gives the heap's free memory back to the system. */
static void unsent_done(struct ld_req *r) {
  if (!r->unsent) return;
  uint64_t left = __atomic_sub_fetch(&unsent_bytes, r->unsent, __ATOMIC_RELAXED);
  r->unsent = 0;
  if (left == 0 && __atomic_load_n(&unsent_peak, __ATOMIC_RELAXED) >= TRIM_AFTER_UNSENT &&
      __atomic_exchange_n(&unsent_peak, 0, __ATOMIC_RELAXED) >= TRIM_AFTER_UNSENT)
    malloc_trim(0);
}

uint64_t ld_server_unsent_bytes(void) { return __atomic_load_n(&unsent_bytes, __ATOMIC_RELAXED); }

size_t ld_response_len(const struct ld_response *out) { return out->body.len + (out->refs ? out->refs->bytes : 0); }

size_t ld_response_held(const struct ld_response *out) {
  return ld_response_len(out) - (out->refs ? (size_t)out->refs->file_bytes : 0);
}

int ld_response_flatten(struct ld_response *out) {
  struct ld_refs *refs = out->refs;
  if (!refs) return 0;
  struct lnc_buf flat = {0};
  if (lnc_buf_reserve(&flat, ld_response_len(out))) return -1;
  size_t at = 0;
  for (size_t i = 0; i < refs->n; i++) {
    lnc_buf_append(&flat, out->body.data + at, refs->v[i].at - at); /* reserved: cannot fail */
    at = refs->v[i].at;
    if (refs->v[i].fd < 0) {
      lnc_buf_append(&flat, refs->v[i].ptr, refs->v[i].len);
      continue;
    }
    /* A value run left in its file: read in, not loaded from the mapping (lance.h). */
    for (size_t done = 0; done < refs->v[i].len;) {
      ssize_t r = pread(refs->v[i].fd, flat.data + flat.len, refs->v[i].len - done, (off_t)(refs->v[i].off + done));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        lnc_buf_free(&flat);
        return -1;
      }
      done += (size_t)r;
      flat.len += (size_t)r;
    }
  }
  lnc_buf_append(&flat, out->body.data + at, out->body.len - at);
  lnc_buf_free(&out->body);
  out->body = flat;
  ld_refs_free(refs);
  out->refs = NULL;
  return 0;
}

void ld_response_drop(struct ld_response *out) {
  lnc_buf_free(&out->body);
  ld_refs_free(out->refs);
  out->refs = NULL;
}

/* r is over (answered and sent, failed, or its client went away): counted in the metrics and
 * the request log, its limits' counts given back, and freed. addr: the client's, for the log. */
void ld_req_finish(struct ld_req *r, const struct sockaddr *addr, bool aborted) {
  double secs = lnc_now_s() - r->start;
  int status = r->status ? r->status : 499; /* never answered: client went away */
  ld_metrics_request(r->route, r->format, status, secs);
  if (r->lim.request_log) {
    char a[INET6_ADDRSTRLEN] = "?";
    if (addr && addr->sa_family == AF_INET)
      inet_ntop(AF_INET, &((const struct sockaddr_in *)addr)->sin_addr, a, sizeof a);
    else if (addr && addr->sa_family == AF_INET6)
      inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)addr)->sin6_addr, a, sizeof a);
    ld_log(LD_LOG_INFO, "%s %s %.200s %d %s rows=%llu in=%zu out=%zu %.3fms id=%llu%s%s", a, r->method,
           r->url ? r->url : "", status, ld_format_name(r->format), (unsigned long long)r->rows, r->bytes_in,
           r->bytes_out, secs * 1e3, (unsigned long long)r->id, r->h2 ? " h2" : "", aborted ? " (aborted)" : "");
  }
  __atomic_sub_fetch(&inflight, 1, __ATOMIC_RELAXED);
  work_done(r);
  unsent_done(r);
  ld_req_body_release(r);
  lnc_buf_free(&r->body);
  ld_response_drop(&r->out); /* answered and never sent (a handed-over body is NULL here) */
  free(r->url);
  free(r);
}

/* Built and queued (len bytes, 0 when it was not): the request no longer holds a max_inflight
 * slot, whether or not its client reads (clients that never read held every slot); what it
 * holds now is its unsent answer. */
void ld_req_answered(struct ld_req *r, size_t len) {
  work_done(r);
  if (len) unsent_queued(r, len);
}

/* Its answer is in r->out (stage ANSWERED): queued back to its network thread, which sends it
 * (service_resumed). A loop task that parked ends on its own thread, inside lnc_loop_wait:
 * service_resumed runs right after that, so neither the lock nor a wake-up is needed. */
void ld_req_resume(struct ld_req *r) {
  struct ld_net *n = r->net;
  if (pthread_equal(pthread_self(), n->thread)) {
    r->next = n->resumed_here;
    n->resumed_here = r;
    return;
  }
  pthread_mutex_lock(&n->lock);
  r->next = n->resumed;
  __atomic_store_n(&n->resumed, r, __ATOMIC_RELAXED); /* service_resumed peeks at it unlocked */
  pthread_mutex_unlock(&n->lock);
  ld_net_wake(n);
}

/* The answers that came back from tasks and take threads, each sent on its connection or
 * stream, oldest first. */
static void service_resumed(struct ld_net *n) {
  struct ld_req *lifo = n->resumed_here, *fifo = NULL;
  n->resumed_here = NULL;
  if (__atomic_load_n(&n->resumed, __ATOMIC_RELAXED)) { /* a peek; the lock takes it */
    pthread_mutex_lock(&n->lock);
    struct ld_req *more = n->resumed;
    n->resumed = NULL;
    pthread_mutex_unlock(&n->lock);
    while (more) { /* behind this thread's own: they came back earlier */
      struct ld_req *next = more->next;
      more->next = lifo;
      lifo = more;
      more = next;
    }
  }
  while (lifo) {
    struct ld_req *next = lifo->next;
    lifo->next = fifo;
    fifo = lifo;
    lifo = next;
  }
  while (fifo) {
    struct ld_req *next = fifo->next;
    fifo->next = NULL;
    LNC_ASSERT(fifo->stage == LD_STAGE_ANSWERED);
    if (fifo->h2)
      ld_h2_answer_back(fifo);
    else
      ld_h1_answer_back(fifo);
    fifo = next;
  }
}

/* To a take thread, whose answer resumes the connection (already suspended). */
static void hand_off(struct ld_req *r, int block) {
  /* From its network thread (inline or a task that did not park) or a parked task resumed
   * on it: its connection waits (h1.c WORK, h2.c's stream at work), and only the take thread
   * touches r from here. */
  LNC_ASSERT(r->stage == LD_STAGE_NEW || r->stage == LD_STAGE_TASK);
  LNC_ASSERT(ld_net_owned(r->net));
  memset(&r->out, 0, sizeof r->out);
  r->status = 0;
  r->format = 0;
  r->rows = 0;
  r->stage = LD_STAGE_TAKE_THREAD;
  ld_dispatch(r, block);
}

/* A request as a loop task (io_mode direct). Runs on the network thread; parks inside the
 * take while its reads fly. Ending without having parked (warm answers, errors), it leaves
 * r->out for ld_req_run's caller to send; after a park it resumes the request itself. */
static void run_task(void *arg) {
  struct ld_req *r = arg;
  long stall = ld_test_stall_ms(r->url);
  if (stall) lnc_loop_sleep((unsigned)stall);
  r->call = (struct ld_call){.worker = r->net->worker, .nowait = LNC_NOWAIT_RING};
  ld_route(r, &r->out);
  int wb = r->call.would_block;
  if (r->stage != LD_STAGE_TASK) return; /* still inside ld_req_run: it sends or hands off */
  LNC_ASSERT(ld_net_owned(r->net));      /* a parked task resumes on its loop's thread */
  if (wb) {
    ld_response_drop(&r->out);
    hand_off(r, wb);
    return;
  }
  r->stage = LD_STAGE_ANSWERED;
  ld_req_resume(r);
}

/* The request's record, made when its headers are in. */
struct ld_req *ld_req_new(const char *url, const char *method) {
  struct ld_req *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  __atomic_add_fetch(&inflight, 1, __ATOMIC_SEQ_CST); /* before the gate is read: main.c drain */
  r->start = lnc_now_s();
  static uint64_t next_id;
  r->id = __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);
  r->lim = ld_limits_get();
  r->route = LD_R_OTHER;
  snprintf(r->method, sizeof r->method, "%s", method);
  r->url = strdup(url);
  if (!r->url) { /* counted: finished as one never answered */
    ld_req_finish(r, NULL, true);
    return NULL;
  }
  return r;
}

/* Which limit admit_work refused r at, for its 503's message. */
static const char *work_limit(const struct ld_req *r) {
  return __atomic_load_n(&unsent_bytes, __ATOMIC_RELAXED) >= r->lim.max_unsent
             ? "unsent answers' memory (max_unsent_bytes: clients reading slowly)"
             : "in-flight request";
}

/* Over the connection limit, connections with no request in progress make room first: the
 * oldest anywhere that has waited past the eviction grace, else this thread's oldest whatever
 * its age. The grace spares a fresh connection whose request may be on its way, but a request
 * in hand outranks one that has sent none (clients reopening unused connections faster than
 * the grace held every slot, and requests were refused). A waiting connection on another
 * thread cannot be closed from here: that thread is woken to make room, and the request is
 * served meanwhile, a moment over the (soft) limit. True when none could be closed or is
 * being closed: every connection is in a request. */
static bool over_connection_limit(struct ld_net *n, const struct ld_req *r) {
  uint64_t excess = ld_conn_excess(r->lim.connection_limit);
  if (!excess) return false;
  if (ld_conn_make_room(n, nets, nets_started(), excess > 1024 ? 1024 : (int)excess, false) > 0 ||
      ld_conn_evict(n, 1) > 0)
    return false;
  return !ld_conn_wake_waiting_elsewhere(n, nets, nets_started());
}

int ld_req_refuse_busy(struct ld_req *r, bool body_coming, bool over_conns, struct ld_err *e) {
  if (ld_req_cheap(r)) return 0; /* health and metrics answer whatever the load */
  if (over_conns || (body_coming ? __atomic_load_n(&working, __ATOMIC_RELAXED) >= r->lim.max_inflight
                                 : !admit_work(r, true)))
    return ld_errf(e, LD_UNAVAILABLE, "server busy: over the %s limit, retry shortly",
                   over_conns ? "connection" : work_limit(r));
  return 0;
}

int ld_req_refuse_declared(const struct ld_req *r, const char *cl, struct ld_err *e) {
  uint64_t len;
  if (cl && lnc_parse_u64(cl, strlen(cl), &len) && len > r->lim.max_body)
    return ld_errf(e, LD_TOO_LARGE, "request body of %llu bytes is over max_body_bytes (%llu)",
                   (unsigned long long)len, (unsigned long long)r->lim.max_body);
  return 0;
}

int ld_req_admit_headers(struct ld_net *n, struct ld_req *r, bool body_coming, const char *cl, struct ld_err *e) {
  if (atomic_load(&ld_draining) == LD_DRAIN_CLOSED) return ld_errf(e, LD_UNAVAILABLE, "shutting down");
  if (ld_req_refuse_busy(r, body_coming, over_connection_limit(n, r), e)) return e->http;
  return ld_req_refuse_declared(r, cl, e);
}

/* The body is in: refused if it was over max_body_bytes or over the bodies' memory, or if
 * the request cannot be admitted to work now; 0 when it goes on. */
int ld_req_admit_body(struct ld_req *r, struct ld_err *e) {
  if (r->body_too_big)
    return ld_errf(e, LD_TOO_LARGE, "request body is over max_body_bytes (%llu)", (unsigned long long)r->lim.max_body);
  if (r->body_busy || (!r->working && !admit_work(r, !ld_req_cheap(r))))
    return ld_errf(e, LD_UNAVAILABLE, "server busy: over the %s limit, retry shortly",
                   r->body_busy ? "request bodies' memory (max_inflight x max_body_bytes)" : work_limit(r));
  return 0;
}

/* io_mode direct: the request as a loop task that parks on its device reads (run_task).
 * Returns 1 when the task parked (it resumes the connection), 0 when it answered in r->out,
 * -1 when it needs a thread (r->call.would_block says which) or could not start. */
static int try_as_task(struct ld_net *n, struct ld_req *r) {
  int parked = 0;
  if (lnc_loop_spawn(n->loop, run_task, r, &parked, NULL) != 0) return -1;
  if (parked) {
    r->stage = LD_STAGE_TASK;
    return 1;
  }
  return r->call.would_block ? -1 : 0;
}

/* io_mode buffered: tried here without waiting (page cache only), which answers warm
 * requests inline. 0 when answered in r->out, -1 when it needs a thread. */
static int try_inline(struct ld_net *n, struct ld_req *r) {
  r->call = (struct ld_call){.worker = n->worker, .nowait = LNC_NOWAIT_NEVER};
  double t0 = lnc_now_s();
  ld_route(r, &r->out);
  r->route_s = lnc_now_s() - t0;
  return r->call.would_block ? -1 : 0;
}

static uint64_t crowded_handoffs; /* requests ld_req_run handed over for crowded() */
uint64_t ld_server_crowded_handoffs(void) { return __atomic_load_n(&crowded_handoffs, __ATOMIC_SEQ_CST); }

/* Whether n has two or more connections in a request beyond the least busy network thread:
 * placement put busy clients together (a connection is placed when it opens, before anyone
 * knows which will be busy). A heavy request of n's (conns.c ld_conn_note_work) then runs on
 * a take thread, so the takes of n's connections spread over the CPUs while n sends their
 * answers. Where the threads are evenly busy, inline is better: a hand-over costs a
 * suspension, two wake-ups and the answer read on another CPU (a sequential client lost 10–20
 * % of its batch rate to it in an A/B). */
static bool crowded(struct ld_net *n) {
  int here = ld_net_busy(n), least = here, started = nets_started();
  for (int i = 0; i < started; i++) {
    int b = ld_net_busy(&nets[i]);
    if (b < least) least = b;
  }
  return here >= least + 2;
}

/* A request at work. Health and metrics answer at once; the rest is tried on this thread
 * (a loop task or a non-waiting attempt), and what would block outside the ring goes to a
 * take thread while this thread serves other connections. 0: answered in r->out, to be sent
 * now; 1: its answer comes later through ld_req_resume. */
int ld_req_run(struct ld_net *n, struct ld_req *r) {
  r->net = n;
  if (ld_req_cheap(r)) {
    ld_route(r, &r->out);
    return 0;
  }
  if (r->h1 && ld_h1_heavy(r->h1) && crowded(n)) {
    hand_off(r, LD_BLOCK_DISK);
    /* After ld_dispatch counted it, so metrics' difference of the two never goes below 0. */
    __atomic_add_fetch(&crowded_handoffs, 1, __ATOMIC_SEQ_CST);
    return 1;
  }
  int rc = direct_tasks && n->loop ? try_as_task(n, r) : try_inline(n, r);
  if (rc >= 0) return rc;
  ld_response_drop(&r->out);
  int block = r->call.would_block;
  hand_off(r, block ? block : LD_BLOCK_DISK);
  return 1;
}

/* One listening socket per address; numeric or resolvable host, port 0 = any free port. */
static int open_listener(const char *spec, char *msg, size_t msglen) {
  char host[256], port_s[8];
  unsigned port;
  if (ld_split_hostport(spec, host, sizeof host, &port)) {
    snprintf(msg, msglen, "bad listen address '%s' (want HOST:PORT or [V6]:PORT)", spec);
    return -1;
  }
  snprintf(port_s, sizeof port_s, "%u", port);
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV}, *ai;
  int g = getaddrinfo(host[0] && strcmp(host, "*") ? host : NULL, port_s, &hints, &ai);
  if (g) {
    snprintf(msg, msglen, "listen %s: %s", spec, gai_strerror(g));
    return -1;
  }
  int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1;
  if (fd >= 0) {
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ai->ai_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  }
  if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 1024)) {
    snprintf(msg, msglen, "listen %s: %s", spec, strerror(errno));
    if (fd >= 0) close(fd);
    freeaddrinfo(ai);
    return -1;
  }
  freeaddrinfo(ai);
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;
  char addr[INET6_ADDRSTRLEN] = "?";
  unsigned actual = port;
  if (!getsockname(fd, (struct sockaddr *)&ss, &sl)) {
    if (ss.ss_family == AF_INET) {
      struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
      inet_ntop(AF_INET, &s4->sin_addr, addr, sizeof addr);
      actual = ntohs(s4->sin_port);
      ld_log(LD_LOG_INFO, "listening on %s:%u", addr, actual);
    } else {
      struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
      inet_ntop(AF_INET6, &s6->sin6_addr, addr, sizeof addr);
      actual = ntohs(s6->sin6_port);
      ld_log(LD_LOG_INFO, "listening on [%s]:%u", addr, actual);
    }
  }
  return fd;
}

/* ---- network threads ------------------------------------------------------------------- */
struct ld_pending_conn {
  struct ld_pending_conn *next;
  double accepted; /* lnc_now_s() at accept: the connection's age for idle-first eviction */
  int fd;
  socklen_t addrlen;
  struct sockaddr_storage addr;
};

void ld_net_hand(struct ld_net *n, int fd, const void *addr, unsigned addrlen) {
  struct ld_pending_conn *p = malloc(sizeof *p);
  if (!p || addrlen > sizeof p->addr) {
    free(p);
    close(fd);
    __atomic_sub_fetch(&n->conns, 1, __ATOMIC_RELAXED);
    ld_conn_addr_release(ld_conn_addr_bucket(addr));
    return;
  }
  p->fd = fd;
  p->accepted = lnc_now_s();
  p->addrlen = addrlen;
  memcpy(&p->addr, addr, addrlen);
  pthread_mutex_lock(&n->lock);
  p->next = n->queue;
  n->queue = p;
  pthread_mutex_unlock(&n->lock);
  ld_net_wake(n);
}

void ld_net_wake(struct ld_net *n) {
  uint64_t one = 1;
  if (write(n->wake_fd, &one, sizeof one) < 0) { /* the counter is far from overflowing */
  }
}

/* Adds the connections accept.c queued for this thread to its daemon (on the thread). */
static void add_pending(struct ld_net *n) {
  uint64_t v;
  if (read(n->wake_fd, &v, sizeof v) < 0) { /* EAGAIN: nothing new */
  }
  pthread_mutex_lock(&n->lock);
  struct ld_pending_conn *lifo = n->queue, *p = NULL;
  n->queue = NULL;
  pthread_mutex_unlock(&n->lock);
  while (lifo) { /* pushed newest first: added oldest first, so the waiting list stays in age order */
    struct ld_pending_conn *next = lifo->next;
    lifo->next = p;
    p = lifo;
    lifo = next;
  }
  while (p) {
    struct ld_pending_conn *next = p->next;
    /* HTTP/2's preface, or HTTP/1.1 (h2.c looks at the first bytes). */
    if (!ld_h2_sniff(n, p->fd, (struct sockaddr *)&p->addr, p->addrlen, p->accepted))
      ld_net_add_http1(n, p->fd, (struct sockaddr *)&p->addr, p->addrlen, p->accepted);
    free(p);
    p = next;
  }
}

void ld_server_count_conn(int delta) {
  if (delta > 0)
    __atomic_add_fetch(&connections, 1, __ATOMIC_RELAXED);
  else
    __atomic_sub_fetch(&connections, 1, __ATOMIC_RELAXED);
}

/* Copies the loop's counters where metrics (another thread) can read them. */
static void publish_stats(struct ld_net *n, lnc_loop *loop) {
  struct lnc_loop_stats s;
  lnc_loop_get_stats(loop, &s);
  uint64_t *dst = (uint64_t *)&n->published, *src = (uint64_t *)&s;
  for (size_t i = 0; i < sizeof s / sizeof(uint64_t); i++) __atomic_store_n(&dst[i], src[i], __ATOMIC_RELAXED);
}

void ld_server_loop_stats(struct lnc_loop_stats *sum) {
  memset(sum, 0, sizeof *sum);
  uint64_t *dst = (uint64_t *)sum;
  for (int k = 0, started = nets_started(); k < started; k++) {
    uint64_t *src = (uint64_t *)&nets[k].published;
    for (size_t i = 0; i < sizeof *sum / sizeof(uint64_t); i++) dst[i] += __atomic_load_n(&src[i], __ATOMIC_RELAXED);
  }
}

static void loop_started(struct ld_net *n, int state) {
  pthread_mutex_lock(&n->lock);
  n->loop_state = state;
  pthread_cond_signal(&n->loop_cv);
  pthread_mutex_unlock(&n->lock);
}

/* Whether n's loop started: a thread without one would still be handed connections and
 * never serve them, so start-up fails instead. */
static bool loop_running(struct ld_net *n) {
  pthread_mutex_lock(&n->lock);
  while (!n->loop_state) pthread_cond_wait(&n->loop_cv, &n->lock);
  int state = n->loop_state;
  pthread_mutex_unlock(&n->lock);
  return state > 0;
}

/* The smaller of a deadline in ms (-1: none) and the wait so far. */
static int sooner(int due, int ms) { return due >= 0 && due < ms ? due : ms; }

/* The thread's one loop: the deadlines of its connections (conns.c, h1.c, h2.c) bound one
 * lnc_loop_wait, which submits the reads queued by tasks, waits for the wake fd, the HTTP/1.1
 * and HTTP/2 epoll fds, a read completion or the next deadline, and resumes the tasks whose
 * reads are in; then what became ready is served: new connections, answers back from tasks
 * and take threads, the sockets with bytes in or room out. */
static void *net_main(void *arg) {
  struct ld_net *n = arg;
  struct ld_err e;
  if (ld_service_thread_start(&n->loop, &n->worker, &e)) {
    ld_log(LD_LOG_ERROR, "network thread %d: %s", n->index, e.message);
    loop_started(n, -1);
    return NULL;
  }
  loop_started(n, 1);
  int fds[3] = {n->wake_fd, n->h1_epfd, n->h2_epfd};
  lnc_loop *loop = n->loop;
  atomic_store(&n->last_turn, lnc_now_s());
  while (!atomic_load(&n->stop)) {
    struct ld_limits lim = ld_limits_get();
    int ms = sooner(ld_conn_sweep(n, &lim, nets, nets_started()), max_wait_ms);
    ms = sooner(ld_h1_sweep(n, &lim), ms);
    ms = sooner(ld_h2_sweep(n, &lim), ms);
    uint64_t ready = 0;
    struct lnc_error le = {0};
    /* Lingering sockets are drained every iteration, at least every 10 ms, rather than
     * polled through the ring: a pending poll would hold the socket open after its close. */
    if (n->nlinger && ms > 10) ms = 10;
    if (lnc_loop_wait(loop, fds, 3, ms, &ready, &le)) {
      ld_log(LD_LOG_WARN, "network thread %d: %s", n->index, le.message);
      struct timespec ts = {0, 10 * 1000 * 1000};
      nanosleep(&ts, NULL); /* never spin on a failing ring */
    }
    if (ready & 1) add_pending(n);
    service_resumed(n);
    if (ready & 2) ld_h1_service(n);
    if (ready & 4) ld_h2_service(n);
    if (n->nlinger) ld_linger_service(n);
    publish_stats(n, loop);
    atomic_store(&n->last_turn, lnc_now_s());
  }
  ld_h1_stop(n);
  ld_h2_stop(n);
  ld_service_thread_stop(n->loop, n->worker);
  n->loop = NULL;
  n->worker = NULL;
  return NULL;
}

static int net_start(struct ld_net *n, int index) {
  n->index = index;
  n->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  pthread_mutex_init(&n->lock, NULL);
  pthread_cond_init(&n->loop_cv, NULL);
  if (n->wake_fd < 0 || ld_h1_start(n) < 0 || ld_h2_start(n) < 0) return -1;
  if (pthread_create(&n->thread, NULL, net_main, n)) return -1;
  n->started = true;
  return loop_running(n) ? 0 : -1;
}

static void net_stop(struct ld_net *n) {
  atomic_store(&n->stop, 1); /* from here n's state is the stopping thread's (ld_net_owned) */
  if (n->started) {
    uint64_t one = 1;
    if (write(n->wake_fd, &one, sizeof one) < 0) { /* cannot fail on a fresh counter */
    }
    pthread_join(n->thread, NULL);
  }
  for (struct ld_pending_conn *p = n->queue, *next; p; p = next) {
    next = p->next;
    close(p->fd);
    free(p);
  }
  n->queue = NULL;
}

/* What other threads may still touch after the network thread stopped: a take thread that
 * resumed the last answer wakes this thread's eventfd after the resume (dispatch.c). */
static void net_free(struct ld_net *n) {
  if (n->wake_fd >= 0) close(n->wake_fd);
  if (n->h1_epfd >= 0) close(n->h1_epfd);
  if (n->h2_epfd >= 0) close(n->h2_epfd);
  pthread_mutex_destroy(&n->lock);
  pthread_cond_destroy(&n->loop_cv);
}

static int start_failed(void) {
  ld_server_stop();
  ld_server_free();
  return -1;
}

int ld_server_start(const struct ld_config *cfg, int rootfd) {
  ld_listing_set_root(rootfd);
  if (!cfg->root_made && !ld_listing_count_served(rootfd))
    ld_log(LD_LOG_WARN, "%s holds no Lance data in it or one level below (no *.lance file, no "
                        "directory with _versions/): point --root at the folder holding your "
                        "x.lance files or datasets",
           cfg->root);
  char msg[512];
  /* The hard cap sits above connection_limit so the excess can make room (idle connections
   * are closed first, conns.c) or get a 503, not a reset. */
  uint64_t hard = cfg->connection_limit + (cfg->connection_limit < 128 ? 64 : cfg->connection_limit / 2);
  /* Sockets from a .socket unit (socket activation) replace the `listen` addresses: they stay
   * open across restarts, so connections queue instead of being refused. */
  nlisten = ld_listen_fds(listen_fds, LD_MAX_LISTEN);
  bool activated = nlisten > 0;
  for (int i = 0; i < nlisten; i++) fcntl(listen_fds[i], F_SETFL, fcntl(listen_fds[i], F_GETFL) | O_NONBLOCK);
  if (activated) ld_log(LD_LOG_INFO, "listening on %d socket%s passed by systemd", nlisten, nlisten == 1 ? "" : "s");
  for (int i = 0; !activated && i < cfg->nlisten; i++) {
    int fd = open_listener(cfg->listen[i], msg, sizeof msg);
    if (fd < 0) {
      ld_log(LD_LOG_ERROR, "%s", msg);
      return start_failed();
    }
    listen_fds[nlisten++] = fd;
  }
  int n = cfg->workers > 1 ? cfg->workers : 1;
  nets = calloc((size_t)n, sizeof *nets);
  if (!nets) {
    return start_failed();
  }
  direct_tasks = cfg->io_mode == LD_IO_DIRECT;
  for (int i = 0; i < n; i++) {
    nets[i].wake_fd = nets[i].h1_epfd = nets[i].h2_epfd = -1;
    int rc = net_start(&nets[i], i);
    __atomic_store_n(&nnets, i + 1, __ATOMIC_RELEASE); /* a failed one too: start_failed undoes what it began */
    if (rc) {
      ld_log(LD_LOG_ERROR, "could not start network thread %d", i);
      return start_failed();
    }
  }
  if (ld_acceptor_start(listen_fds, nlisten, nets, nnets, hard)) {
    ld_log(LD_LOG_ERROR, "could not start the acceptor thread");
    return start_failed();
  }
  return 0;
}

/* Stops accepting and closes the listening sockets: a connection made during the drain is
 * refused at once (it hung in the backlog until the process ended). Under socket activation
 * systemd keeps its own copy of the socket, and connections wait there for the next start. */
static void close_listeners(void) {
  for (int i = 0; i < nlisten; i++) close(listen_fds[i]);
  nlisten = 0;
}

void ld_server_quiesce(void) {
  ld_acceptor_stop(); /* joined: nothing polls the sockets closed next */
  close_listeners();
}

void ld_server_stop(void) {
  ld_acceptor_stop();
  for (int i = 0; i < nnets; i++) net_stop(&nets[i]);
  close_listeners();
}

void ld_server_free(void) {
  for (int i = 0; i < nnets; i++) net_free(&nets[i]);
  free(nets);
  nets = NULL;
  nnets = 0;
}
