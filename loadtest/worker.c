/* Worker thread loop (see worker.h). The hot path takes no locks: counters and interval
 * latencies are kept privately and published to the reporter every 50 ms. Open loop follows
 * wrk2: each request has an intended send time on a fixed schedule, and its latency is
 * counted from then, whether or not a connection was free to send it at that moment. */
#include "worker.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#define RBUF_SIZE  (256 * 1024)
#define TICK_NS    (10 * 1000000ULL) /* timeouts and reconnects are checked this often */
#define PUBLISH_NS (50 * 1000000ULL) /* counters reach the progress line this often */
#define MAX_EVENTS 256
#define NOT_IDLE   UINT32_MAX

uint64_t ld_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

typedef struct loop {
  ld_worker *w;
  const ld_worker_cfg *cfg;
  int epfd;
  ld_conn *conns;
  uint32_t *idle; /* stack of IDLE connection indices */
  uint32_t nidle;
  ld_idgen gen;
  ld_rng sample_rng; /* decides which requests --verify keeps */
  uint64_t *ids;     /* nconns * batch */
  char *rbuf;
  ld_stats stats;     /* private; published under w->mu */
  ld_hist *interval;  /* private interval latencies */
  uint64_t scheduled; /* open loop: requests whose intended time has been handed out */
  double phase;       /* open loop: this thread's offset within one interval */
  bool use_pwait2;
} loop;

/* Intended send time of the k-th request of this thread: the schedule is computed from
 * the start each time, so rounding never accumulates into a rate error. */
static uint64_t intended(const loop *L, uint64_t k) {
  return L->cfg->start_ns + (uint64_t)(((double)k + L->phase) * 1e9 / L->cfg->rate);
}

static void idle_push(loop *L, ld_conn *c) {
  if (c->idle_pos != NOT_IDLE) return;
  c->idle_pos = L->nidle;
  L->idle[L->nidle++] = c->index;
}

static void idle_remove(loop *L, ld_conn *c) {
  if (c->idle_pos == NOT_IDLE) return;
  uint32_t last = L->idle[--L->nidle];
  L->idle[c->idle_pos] = last;
  L->conns[last].idle_pos = c->idle_pos;
  c->idle_pos = NOT_IDLE;
}

static ld_conn *idle_pop(loop *L) {
  if (L->nidle == 0) return NULL;
  ld_conn *c = &L->conns[L->idle[L->nidle - 1]];
  idle_remove(L, c);
  return c;
}

static void record_latency(loop *L, uint64_t origin, uint64_t now) {
  uint64_t us = now > origin ? (now - origin) / 1000 : 0;
  ld_hist_record(L->w->hist, us);
  ld_hist_record(L->interval, us);
}

/* The outstanding request of c will never be answered. */
static void abandon(loop *L, ld_conn *c) {
  if (c->verify_slot >= 0 && L->cfg->verify) ld_verify_complete(L->cfg->verify, c->verify_slot, 0, NULL, 0);
  c->verify_slot = -1;
  c->resend = false;
  c->deadline = 0;
}

static void handle_event(loop *L, ld_conn *c, ld_conn_event ev, uint64_t now);

/* Reconnects a CLOSED connection unless it is backing off after failed connects. */
static void reopen(loop *L, ld_conn *c, uint64_t now) {
  if (c->state != LD_CONN_CLOSED || c->retry_at > now || now >= L->cfg->end_ns) return;
  c->deadline = now + L->cfg->timeout_ns;
  ld_conn_event ev = ld_conn_connect(c, L->cfg->addr, L->cfg->addrlen);
  if (ev != LD_CEV_NONE) handle_event(L, c, ev, now);
}

static void send_request(loop *L, ld_conn *c, uint64_t now) {
  c->deadline = now + L->cfg->timeout_ns;
  ld_conn_event ev = ld_conn_send(c, c->verify_slot >= 0);
  if (ev != LD_CEV_NONE) handle_event(L, c, ev, now);
}

static void dispatch(loop *L, ld_conn *c, uint64_t origin, uint64_t now) {
  const ld_worker_cfg *cfg = L->cfg;
  size_t n = cfg->raw ? 0 : cfg->batch;
  if (n) ld_idgen_fill(&L->gen, c->ids, n);
  bool post;
  ld_req_build(cfg->tmpl, c->ids, n, &c->out, &post);
  c->post = post;
  c->t_origin = origin;
  c->retried = false;
  c->resend = false;
  c->verify_slot = -1;
  /* Sample about one request in four until the pool is full, so samples spread over time. */
  if (cfg->verify && (ld_rng_next(&L->sample_rng) & 3) == 0)
    c->verify_slot = ld_verify_claim(cfg->verify, c->ids, n);
  L->stats.posts += post;
  L->stats.bytes_out += c->out.len;
  send_request(L, c, now);
}

static void on_response(loop *L, ld_conn *c, uint64_t now) {
  const ld_http_resp *r = &c->resp;
  ld_stats *s = &L->stats;
  s->responses++;
  int cls = r->status / 100;
  if (cls >= 1 && cls <= 5) s->status_class[cls]++;
  if (cls == 4) s->errors[LD_ERR_HTTP_4XX]++;
  if (cls == 5) s->errors[LD_ERR_HTTP_5XX]++;
  if (cls == 2 && !L->cfg->raw) s->rows += L->cfg->batch;
  s->bytes_in += c->bytes_in;
  s->body_bytes += r->body_bytes;
  record_latency(L, c->t_origin, now);
  if (c->verify_slot >= 0) {
    ld_verify_complete(L->cfg->verify, c->verify_slot, r->status, c->resp.body, c->resp.body_len);
    c->resp.body = NULL; /* ownership moved to the pool */
    c->resp.body_len = c->resp.body_cap = 0;
    c->verify_slot = -1;
  }
  c->deadline = 0;
}

static void handle_event(loop *L, ld_conn *c, ld_conn_event ev, uint64_t now) {
  switch (ev) {
  case LD_CEV_NONE:
    break;
  case LD_CEV_CONNECTED:
    L->stats.connects++;
    c->backoff_ms = 0;
    c->deadline = 0;
    if (c->resend) {
      c->resend = false;
      send_request(L, c, now);
    } else {
      idle_push(L, c);
    }
    break;
  case LD_CEV_CONNECT_FAILED:
    L->stats.errors[LD_ERR_CONNECT]++;
    L->w->last_errno = c->sys_errno;
    abandon(L, c);
    /* Back off (10 ms doubling to 1 s) so a dead server is not hammered with SYNs. */
    c->backoff_ms = c->backoff_ms ? (c->backoff_ms * 2 > 1000 ? 1000 : c->backoff_ms * 2) : 10;
    c->retry_at = now + (uint64_t)c->backoff_ms * 1000000ULL;
    break;
  case LD_CEV_RESPONSE:
    on_response(L, c, now);
    if (c->state == LD_CONN_IDLE)
      idle_push(L, c);
    else
      reopen(L, c, now);
    break;
  case LD_CEV_RETRY:
    L->stats.retries++;
    c->retried = true;
    c->resend = true;
    reopen(L, c, now);
    break;
  case LD_CEV_ERROR:
    L->stats.errors[c->err]++;
    if (c->sys_errno) L->w->last_errno = c->sys_errno;
    abandon(L, c);
    /* Reconnected by the next maintenance tick, not here: a server that fails every fresh
     * connection at once must not turn this into a tight connect loop. */
    break;
  case LD_CEV_IDLE_CLOSED:
    idle_remove(L, c);
    reopen(L, c, now);
    break;
  }
}

/* Timeouts and delayed reconnects. */
static void maintain(loop *L, uint64_t now) {
  for (unsigned i = 0; i < L->cfg->nconns; i++) {
    ld_conn *c = &L->conns[i];
    if ((c->state == LD_CONN_BUSY || c->state == LD_CONN_CONNECTING) && c->deadline && now >= c->deadline) {
      bool connecting = c->state == LD_CONN_CONNECTING;
      L->stats.errors[connecting ? LD_ERR_CONNECT : LD_ERR_TIMEOUT]++;
      abandon(L, c);
      ld_conn_close(c);
      if (connecting) {
        c->backoff_ms = c->backoff_ms ? (c->backoff_ms * 2 > 1000 ? 1000 : c->backoff_ms * 2) : 10;
        c->retry_at = now + (uint64_t)c->backoff_ms * 1000000ULL;
      }
    }
    if (c->state == LD_CONN_CLOSED) reopen(L, c, now);
  }
}

static void publish(loop *L) {
  ld_worker *w = L->w;
  pthread_mutex_lock(&w->mu);
  w->stats = L->stats;
  ld_hist_merge(w->interval, L->interval);
  pthread_mutex_unlock(&w->mu);
  ld_hist_reset(L->interval);
}

static void send_due(loop *L, uint64_t now) {
  if (L->cfg->rate <= 0) {
    ld_conn *c;
    while ((c = idle_pop(L))) dispatch(L, c, now, now);
    return;
  }
  /* Bounded by the number of idle connections: each dispatch takes one. */
  while (L->nidle) {
    uint64_t t = intended(L, L->scheduled);
    if (t > now || t >= L->cfg->end_ns) break;
    L->scheduled++;
    dispatch(L, idle_pop(L), t, now);
  }
}

static void wait_events(loop *L, struct epoll_event *evs, int *nev, uint64_t now) {
  uint64_t until = now + TICK_NS;
  if (L->cfg->end_ns < until) until = L->cfg->end_ns;
  if (L->cfg->rate > 0 && L->nidle) {
    uint64_t t = intended(L, L->scheduled);
    if (t < until) until = t;
  }
  uint64_t wait = until > now ? until - now : 0;
  int n = -1;
  /* --busy-poll: poll before sleeping while answers are due. A server that must wake this
   * thread for each answer pays for the wakeup on its own CPU; a generator with CPUs to
   * spare can save it that, at the price of spinning (so off by default: on a small machine
   * the spin would take CPU from the server under test). */
  uint64_t spin = L->cfg->busy_poll_ns;
  if (spin && wait && L->nidle < L->cfg->nconns) {
    uint64_t spin_end = now + (wait < spin ? wait : spin);
    do {
      n = epoll_wait(L->epfd, evs, MAX_EVENTS, 0);
      if (n != 0) {
        *nev = n < 0 ? 0 : n;
        return;
      }
    } while (ld_now_ns() < spin_end);
    now = ld_now_ns();
    wait = until > now ? until - now : 0;
  }
  if (L->use_pwait2) {
    struct timespec ts = {.tv_sec = (time_t)(wait / 1000000000ULL), .tv_nsec = (long)(wait % 1000000000ULL)};
    n = epoll_pwait2(L->epfd, evs, MAX_EVENTS, &ts, NULL);
    if (n < 0 && errno == ENOSYS) L->use_pwait2 = false;
  }
  if (!L->use_pwait2) {
    /* Millisecond timeouts, rounded down: the last partial millisecond is spun rather than
     * overslept, because lateness would be charged to the server as latency. */
    n = epoll_wait(L->epfd, evs, MAX_EVENTS, (int)(wait / 1000000ULL));
  }
  *nev = n < 0 ? 0 : n;
}

/* Requests that the end of the run cut off. In open loop their latency so far (from the
 * intended time) is a lower bound of the real one and is recorded, so a server that stalls
 * near the end still shows in the tail; closed-loop runs only count them. */
static void finish(loop *L, uint64_t end) {
  bool open_loop = L->cfg->rate > 0;
  for (unsigned i = 0; i < L->cfg->nconns; i++) {
    ld_conn *c = &L->conns[i];
    if (c->state == LD_CONN_BUSY || c->resend) {
      L->stats.inflight_end++;
      if (open_loop) record_latency(L, c->t_origin, end);
      abandon(L, c);
    }
  }
  if (open_loop) {
    for (uint64_t k = L->scheduled;; k++) {
      uint64_t t = intended(L, k);
      if (t >= end) break;
      L->stats.unsent++;
      record_latency(L, t, end);
    }
  }
}

static void *worker_main(void *arg) {
  ld_worker *w = arg;
  const ld_worker_cfg *cfg = &w->cfg;
  loop L = {.w = w, .cfg = cfg, .use_pwait2 = true};
  size_t batch = cfg->raw ? 0 : cfg->batch;
  L.epfd = epoll_create1(EPOLL_CLOEXEC);
  L.conns = calloc(cfg->nconns, sizeof *L.conns);
  L.idle = calloc(cfg->nconns, sizeof *L.idle);
  L.ids = calloc((size_t)cfg->nconns * (batch ? batch : 1), sizeof *L.ids);
  L.rbuf = malloc(RBUF_SIZE);
  L.interval = ld_hist_new();
  struct epoll_event *evs = calloc(MAX_EVENTS, sizeof *evs);
  if (L.epfd < 0 || !L.conns || !L.idle || !L.ids || !L.rbuf || !L.interval || !evs) {
    w->setup_errno = errno ? errno : ENOMEM;
    goto out;
  }
  ld_idgen_init(&L.gen, &cfg->ids, cfg->num_rows, cfg->seed, cfg->index, cfg->nthreads);
  ld_rng_seed(&L.sample_rng, cfg->seed ^ (0xabcdef12345ULL * (cfg->index + 1)));
  L.phase = cfg->nthreads ? (double)cfg->index / cfg->nthreads : 0;
  for (unsigned i = 0; i < cfg->nconns; i++) {
    ld_conn_init(&L.conns[i], L.epfd, i);
    L.conns[i].idle_pos = NOT_IDLE;
    L.conns[i].ids = L.ids + (size_t)i * (batch ? batch : 1);
  }

  /* Connect before the start so handshakes are not measured as request latency; all
   * threads then begin sending at the same instant. */
  uint64_t now = ld_now_ns();
  for (unsigned i = 0; i < cfg->nconns; i++) reopen(&L, &L.conns[i], now);
  while (now < cfg->start_ns) {
    uint64_t wait = cfg->start_ns - now;
    int nev = epoll_wait(L.epfd, evs, MAX_EVENTS, (int)((wait + 999999) / 1000000));
    now = ld_now_ns();
    for (int i = 0; i < nev; i++) {
      ld_conn *c = &L.conns[evs[i].data.u32];
      handle_event(&L, c, ld_conn_on_event(c, evs[i].events, L.rbuf, RBUF_SIZE), now);
    }
  }
  now = ld_now_ns();
  uint64_t next_tick = now + TICK_NS, next_publish = now + PUBLISH_NS;
  while (now < cfg->end_ns) {
    send_due(&L, now);
    int nev;
    wait_events(&L, evs, &nev, now);
    for (int i = 0; i < nev; i++) {
      ld_conn *c = &L.conns[evs[i].data.u32];
      ld_conn_event ev = ld_conn_on_event(c, evs[i].events, L.rbuf, RBUF_SIZE);
      /* Timestamp each completion itself, not the batch (a vDSO call costs ~20 ns). */
      handle_event(&L, c, ev, ev == LD_CEV_NONE ? 0 : ld_now_ns());
    }
    now = ld_now_ns();
    if (now >= next_tick) {
      maintain(&L, now);
      next_tick = now + TICK_NS;
    }
    if (now >= next_publish) {
      publish(&L);
      next_publish = now + PUBLISH_NS;
    }
  }
  finish(&L, cfg->end_ns);
  publish(&L);

out:
  if (L.conns)
    for (unsigned i = 0; i < cfg->nconns; i++) ld_conn_destroy(&L.conns[i]);
  if (L.epfd >= 0) close(L.epfd);
  free(L.conns);
  free(L.idle);
  free(L.ids);
  free(L.rbuf);
  free(evs);
  ld_hist_free(L.interval);
  return NULL;
}

int ld_worker_init(ld_worker *w, const ld_worker_cfg *cfg) {
  memset(w, 0, sizeof *w);
  w->cfg = *cfg;
  pthread_mutex_init(&w->mu, NULL);
  w->hist = ld_hist_new();
  w->interval = ld_hist_new();
  return w->hist && w->interval ? 0 : -1;
}

int ld_worker_start(ld_worker *w) {
  int r = pthread_create(&w->tid, NULL, worker_main, w);
  w->started = r == 0;
  return r;
}

void ld_worker_join(ld_worker *w) {
  if (w->started) pthread_join(w->tid, NULL);
  w->started = false;
}

void ld_worker_destroy(ld_worker *w) {
  ld_hist_free(w->hist);
  ld_hist_free(w->interval);
  pthread_mutex_destroy(&w->mu);
}

void ld_worker_snapshot(ld_worker *w, ld_stats *stats, ld_hist *into) {
  pthread_mutex_lock(&w->mu);
  *stats = w->stats;
  if (into) ld_hist_merge(into, w->interval);
  ld_hist_reset(w->interval);
  pthread_mutex_unlock(&w->mu);
}
