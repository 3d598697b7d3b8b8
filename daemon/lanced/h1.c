/* HTTP/1.1 connections, framed by lanced itself on the network threads' loops (HTTP/2 beside
 * it in h2.c), the request head and chunked bodies parsed by h1parse.c.
 *
 * Why not libmicrohttpd (which served HTTP/1.1 until 2026-12): Debian's 0.9.75 answers what
 * it refuses itself (a request line or headers over its memory, malformed chunked framing, a
 * header line without a colon) with HTML bodies no option replaces, accepts bare-LF chunk
 * lines, zeroes its 32 KiB connection memory before every request, and writes an answer's
 * head and body in separate system calls. Here every refusal has the JSON error body of
 * docs/api.md, framing is strict (h1parse.c), and an answer leaves in one sendmsg of its head
 * and body (an iovec, no copy of the body into a send buffer).
 *
 * A connection serves one request at a time, in order (pipelined requests wait in its input
 * buffer): HEAD, reading the request's head; BODY, its body; WORK, the request at work on a
 * parked loop task or a take thread (nothing is read meanwhile, so a client that half-closed
 * after its request still gets its answer); SEND, the answer going out. The
 * request's head stays where it was read, at the start of the input buffer, until the
 * request is over: its fields are read in place (ld_h1_header) by whichever thread routes it.
 *
 * Ownership: a connection belongs to its network thread. It is never freed while its request
 * is at work elsewhere (that request comes back through ld_h1_answer_back first), and the
 * header deadline and eviction (conns.c) only touch it while it waits for a request. */
#include "lanced.h"
#include "config.h"
#include "request.h"
#include "routes.h"
#include "server.h"
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* The input buffer: a request's head must fit (414 / 431 beyond), as must the bytes read
 * behind it (its body passes through, pipelined requests wait). */
#define H1_IN_CAP         LD_CONN_MEMORY
#define H1_READS_PER_TURN 8                   /* reads of one connection per event, so one client cannot hog a turn */
#define H1_HEAD_OUT       2048                /* an answer's status line and fields */
#define H1_MAX_ARGS       LD_QUERY_MAX_PARAMS /* query parameters kept, as HTTP/2's */
#define H1_IOV_MAX        IOV_MAX             /* iovecs per sendmsg (the kernel's UIO_MAXIOV) */

enum { H1_HEAD = 1,
       H1_BODY,
       H1_WORK,
       H1_SEND };
enum { CH_SIZE = 1,  /* a chunk-size line is next */
       CH_DATA,      /* chunk_left bytes of data */
       CH_DATA_CRLF, /* the CRLF after a chunk's data */
       CH_TRAILER }; /* trailer lines, up to the empty one */

struct ld_h1_conn {
  struct ld_net *n;
  struct ld_h1_conn *prev, *next; /* the thread's list */
  int fd, state;
  uint32_t watched;  /* epoll events asked for; 0 = not in the epoll set */
  uint32_t bucket;   /* per-address count (accept.c), given back at close */
  struct ld_conn *k; /* its place among the connections waiting for a request (conns.c) */
  double last_io;
  bool heavy;       /* its last request's route held the thread long (ld_h1_heavy) */
  bool peer_closed; /* the end of the client's stream was read */
  char *in;         /* H1_IN_CAP bytes: the current request's head at in[0..head_len) */
  size_t in_len, scan, head_len;
  /* the request being served */
  struct ld_req *r;
  struct ld_h1_head h;
  char *query; /* the target's query, split in place into args */
  const char *arg_key[H1_MAX_ARGS], *arg_val[H1_MAX_ARGS];
  int nargs;
  const char *arg_twice;
  uint64_t body_left; /* Content-Length bytes still to come, or of the current chunk */
  int chunk;          /* CH_*, for a chunked body */
  size_t trailer_bytes;
  bool close_after; /* the connection closes once the answer is out */
  /* the answer: head_out, then the body's runs (and an Arrow answer's refs between them);
   * segs[seg..nsegs) is what is left to write, advanced in place as the socket takes it */
  char head_out[H1_HEAD_OUT];
  size_t head_out_len;
  struct iovec segs_inline[2], *segs;
  size_t nsegs, seg;
  socklen_t addrlen;
  struct sockaddr_storage addr;
};

/* ---- lookups for the routes (request.h) --------------------------------------------------- */
const char *ld_h1_header(const struct ld_h1_conn *c, const char *name) { return ld_h1_field(&c->h, name); }

const char *ld_h1_arg(const struct ld_h1_conn *c, const char *name) {
  for (int i = 0; i < c->nargs; i++)
    if (!strcmp(c->arg_key[i], name)) return c->arg_val[i];
  return NULL;
}

const char *ld_h1_arg_twice(const struct ld_h1_conn *c) { return c->arg_twice; }
bool ld_h1_heavy(const struct ld_h1_conn *c) { return c->heavy; }

/* ---- the socket ------------------------------------------------------------------------------- */
/* Level-triggered: EPOLLIN while a request is read (and while it is at work, until an event
 * comes: conn_event), EPOLLOUT while an answer waits on the socket; 0 takes it out of the set. */
static void watch(struct ld_h1_conn *c, uint32_t events) {
  if (events == c->watched) return;
  struct epoll_event ev = {.events = events, .data.ptr = c};
  int op = !events ? EPOLL_CTL_DEL : c->watched ? EPOLL_CTL_MOD
                                                : EPOLL_CTL_ADD;
  if (epoll_ctl(c->n->h1_epfd, op, c->fd, &ev) == 0 || op == EPOLL_CTL_DEL) c->watched = events;
}

static void conn_free_request(struct ld_h1_conn *c, bool aborted) {
  if (!c->r) return;
  ld_req_finish(c->r, (struct sockaddr *)&c->addr, aborted);
  c->r = NULL;
  free(c->query);
  c->query = NULL;
  c->nargs = 0;
  c->arg_twice = NULL;
  memset(&c->h, 0, sizeof c->h);
}

/* The connection is over: its socket closed (or left lingering: linger), its request (if it is
 * here, never one at work elsewhere) finished as aborted unless it was answered, and freed. */
static void conn_close(struct ld_h1_conn *c, bool linger) {
  LNC_ASSERT(c->state != H1_WORK || atomic_load(&c->n->stop));
  struct ld_net *n = c->n;
  watch(c, 0);
  ld_conn_untrack_fd(n, c->k);
  if (linger)
    ld_linger_add(n, c->fd); /* the socket is the lingering list's now */
  else
    close(c->fd);
  ld_server_count_conn(-1);
  __atomic_sub_fetch(&n->conns, 1, __ATOMIC_RELAXED);
  ld_conn_addr_release(c->bucket);
  conn_free_request(c, c->state != H1_SEND || c->seg < c->nsegs);
  if (c->prev)
    c->prev->next = c->next;
  else
    n->h1_conns = c->next;
  if (c->next) c->next->prev = c->prev;
  free(c->in);
  free(c);
}

/* ---- answers ---------------------------------------------------------------------------------- */
static const char *reason(int status) {
  switch (status) {
  case 100: return "Continue";
  case 200: return "OK";
  case 204: return "No Content";
  case 304: return "Not Modified";
  case 400: return "Bad Request";
  case 403: return "Forbidden";
  case 404: return "Not Found";
  case 405: return "Method Not Allowed";
  case 408: return "Request Timeout";
  case 411: return "Length Required";
  case 413: return "Content Too Large";
  case 414: return "URI Too Long";
  case 415: return "Unsupported Media Type";
  case 416: return "Range Not Satisfiable";
  case 422: return "Unprocessable Content";
  case 429: return "Too Many Requests";
  case 431: return "Request Header Fields Too Large";
  case 500: return "Internal Server Error";
  case 501: return "Not Implemented";
  case 503: return "Service Unavailable";
  case 504: return "Gateway Timeout";
  case 505: return "HTTP Version Not Supported";
  default: return status < 300 ? "OK" : status < 500 ? "Client Error"
                                                     : "Server Error";
  }
}

/* RFC 9110 §6.6.1's Date, formatted once a second per thread. */
static const char *http_date(void) {
  static __thread time_t at;
  static __thread char s[40];
  time_t now = time(NULL);
  if (now != at) {
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(s, sizeof s, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    at = now;
  }
  return s;
}

/* Whether the connection ends after this answer: the client asked (Connection: close, or
 * HTTP/1.0 without keep-alive), the answer says so, the request could not be framed or its
 * body was not read, or the server drains. 503 and 413 close too: a client being refused
 * should come back on a new connection, which the limits see afresh. */
static bool closes_after(const struct ld_h1_conn *c, const struct ld_req *r, const struct ld_response *out) {
  return ld_draining || out->status == 503 || out->status == 413 || out->close || r->framing_bad ||
         r->linger || c->h.close || (c->h.minor == 0 && !c->h.keep_alive) || c->state == H1_HEAD ||
         c->state == H1_BODY;
}

/* One field of the answer's head. A value holding a CR or LF (a message quoting a client's
 * bytes) would end the field early and start another the client chose: it is dropped. */
static void head_add(struct ld_h1_conn *c, const char *name, const char *value) {
  if (strpbrk(value, "\r\n")) return;
  size_t room = sizeof c->head_out - c->head_out_len - 2; /* the head's closing CRLF */
  int k = snprintf(c->head_out + c->head_out_len, room, "%s: %s\r\n", name, value);
  if (k > 0 && (size_t)k < room) c->head_out_len += (size_t)k; /* an over-long extra field is dropped, never cut */
}

/* The iovecs of an answer: its head, then its body from where it is. With refs, the body's
 * runs and the refs' buffers (in the take's array) alternate, in the room ld_refs keeps for
 * it; empty runs are left out. */
static void answer_segments(struct ld_h1_conn *c, const struct ld_response *out, bool head_only) {
  struct ld_refs *refs = out->refs;
  c->segs = refs ? refs->iov : c->segs_inline;
  c->nsegs = c->seg = 0;
  c->segs[c->nsegs++] = (struct iovec){c->head_out, c->head_out_len};
  if (head_only) return;
  size_t at = 0;
  for (size_t i = 0; refs && i < refs->n; i++) {
    if (refs->v[i].at > at) c->segs[c->nsegs++] = (struct iovec){out->body.data + at, refs->v[i].at - at};
    c->segs[c->nsegs++] = (struct iovec){(void *)refs->v[i].ptr, refs->v[i].len};
    at = refs->v[i].at;
  }
  if (out->body.len > at) c->segs[c->nsegs++] = (struct iovec){out->body.data + at, out->body.len - at};
}

/* r->out framed: the status line and fields into head_out, the body sent from where it is. */
static void frame_answer(struct ld_h1_conn *c, struct ld_req *r, struct ld_response *out) {
  bool head_only = !strcmp(r->method, "HEAD");
  c->close_after = closes_after(c, r, out);
  c->head_out_len = (size_t)snprintf(c->head_out, sizeof c->head_out, "HTTP/1.1 %d %s\r\n", out->status, reason(out->status));
  char len[24];
  size_t body_len = ld_response_len(out);
  snprintf(len, sizeof len, "%zu", body_len);
  head_add(c, "Content-Length", len);
  head_add(c, "Date", http_date());
  if (out->content_type) head_add(c, "Content-Type", out->content_type);
  if (out->allow) head_add(c, "Allow", out->allow);
  if (out->retry_after) {
    char v[16];
    snprintf(v, sizeof v, "%d", out->retry_after);
    head_add(c, "Retry-After", v);
  }
  if (out->extra_name) head_add(c, out->extra_name, out->extra_value);
  if (out->content_encoding) head_add(c, "Content-Encoding", out->content_encoding);
  if (out->grpc_status) { /* gRPC-Web over HTTP/1.1 (connect.c): the status in the headers */
    head_add(c, "grpc-status", out->grpc_status);
    head_add(c, "grpc-message", out->grpc_message ? out->grpc_message : "");
  }
  if (c->close_after)
    head_add(c, "Connection", "close");
  else if (c->h.minor == 0)
    head_add(c, "Connection", "keep-alive");
  memcpy(c->head_out + c->head_out_len, "\r\n", 2); /* head_add leaves room for it */
  c->head_out_len += 2;
  answer_segments(c, out, head_only);
  body_len = head_only ? 0 : body_len;
  r->status = out->status;
  r->bytes_out = body_len;
  r->stage = LD_STAGE_SENT;
  c->state = H1_SEND;
  ld_req_answered(r, head_only ? 0 : ld_response_held(out));
}

/* Writes what is left of the answer: 1 all of it, 0 the socket is full (EPOLLOUT), -1 the
 * connection failed. */
static int flush(struct ld_h1_conn *c) {
  while (c->seg < c->nsegs) {
    size_t k = c->nsegs - c->seg;
    struct msghdr m = {.msg_iov = c->segs + c->seg, .msg_iovlen = k < H1_IOV_MAX ? k : H1_IOV_MAX};
    ssize_t w = sendmsg(c->fd, &m, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      watch(c, EPOLLOUT);
      return 0;
    }
    if (w <= 0) return -1;
    c->last_io = lnc_now_s();
    for (size_t left = (size_t)w; left;) { /* the segments written drop off the front */
      struct iovec *v = &c->segs[c->seg];
      size_t n = left < v->iov_len ? left : v->iov_len;
      v->iov_base = (char *)v->iov_base + n;
      v->iov_len -= n;
      left -= n;
      if (!v->iov_len) c->seg++;
    }
  }
  return 1;
}

/* An answer for the request now: framed and written as far as the socket takes it. */
static void answer(struct ld_h1_conn *c, struct ld_response *out) { frame_answer(c, c->r, out); }

/* e in the shape r's route speaks, as the answer (before r is at work, or instead of it). */
static void answer_error(struct ld_h1_conn *c, const struct ld_err *e) {
  struct ld_req *r = c->r;
  ld_response_drop(&r->out);
  memset(&r->out, 0, sizeof r->out);
  ld_error_for(r, &r->out, e);
  answer(c, &r->out);
}

/* ---- requests --------------------------------------------------------------------------------- */
/* The target split: absolute-form (RFC 9112 §3.2.2) reduced to its path, the query split into
 * parameters (decoded as HTTP/2's are), the path percent-decoded. NULL when it is not a path. */
static char *target_path(struct ld_h1_conn *c, char *t) {
  if (!strncasecmp(t, "http://", 7) || !strncasecmp(t, "https://", 8)) {
    t = strchr(t + (t[4] == ':' ? 7 : 8), '/');
    if (!t) return NULL;
  }
  if (*t != '/') return strcmp(t, "*") ? NULL : t; /* OPTIONS * (RFC 9112 §3.2.4) */
  char *q = strchr(t, '?');
  if (q) {
    *q = 0;
    if (!(c->query = strdup(q + 1))) return NULL;
  }
  c->nargs = ld_h2_split_query(c->query, c->arg_key, c->arg_val, H1_MAX_ARGS, &c->arg_twice);
  ld_url_unescape(t);
  return t;
}

/* A request record for a head that could not be parsed: there is nothing to serve, but its
 * refusal is an answer like any other (counted, logged, shaped by what its path was). false:
 * no memory for the record, and the connection is closed (c is gone). */
static bool refuse_unparsed(struct ld_h1_conn *c, const struct ld_err *e) {
  const char *path = c->h.target && c->h.target[0] == '/' ? c->h.target : "/";
  c->r = ld_req_new(path, c->h.method ? c->h.method : "GET");
  if (!c->r) return conn_close(c, false), false;
  c->r->h1 = c;
  c->r->net = c->n;
  c->r->framing_bad = true;
  answer_error(c, e);
  return true;
}

static void send_continue(struct ld_h1_conn *c) {
  static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
  /* Best effort: a socket that cannot take 25 bytes now has a client not reading; the body,
   * sent anyway after its timeout by curl and others, is read the same. */
  ssize_t sent = send(c->fd, cont, sizeof cont - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  (void)sent;
}

/* The head is in: a request record, the checks made before any body (ld_req_admit_headers),
 * and either a body to read or the request run. false: no memory for the record, and the
 * connection is closed (c is gone). */
static bool request_begin(struct ld_h1_conn *c) {
  struct ld_err e, fe;
  int bad = ld_h1_parse_head(c->in, c->head_len, &c->h, &fe);
  char *path = bad ? NULL : target_path(c, (char *)c->h.target);
  if (!bad && !path) bad = ld_errf(&fe, LD_INVALID, "the request target is not a path (want /files/...)");
  if (bad) return refuse_unparsed(c, &fe);
  if (!(c->r = ld_req_new(path, c->h.method))) return conn_close(c, false), false;
  struct ld_req *r = c->r;
  r->h1 = c;
  r->net = c->n;
  bool body_coming = c->h.chunked || (c->h.has_length && c->h.length > 0);
  c->body_left = c->h.chunked ? 0 : c->h.length;
  c->chunk = c->h.chunked ? CH_SIZE : 0;
  c->trailer_bytes = 0;
  ld_conn_request_started(c->n, c->k); /* never evicted below: it is in a request */
  char cl[24];
  snprintf(cl, sizeof cl, "%llu", (unsigned long long)c->h.length);
  if (ld_req_admit_headers(c->n, r, body_coming, c->h.has_length ? cl : NULL, &e)) {
    r->linger = body_coming; /* answered before its body: the connection lingers after it */
    answer_error(c, &e);
    return true;
  }
  c->state = H1_BODY;
  if (!body_coming) return true;
  ld_conn_body_started(c->n, c->k); /* under the deadline again until the body is in */
  if (c->h.expect_continue && c->h.minor == 1) send_continue(c);
  return true;
}

/* The body is in: admitted to work and run; answered now, or when it comes back (WORK). */
static void request_run(struct ld_h1_conn *c) {
  struct ld_req *r = c->r;
  struct ld_err e;
  ld_conn_request_started(c->n, c->k);
  ld_req_body_release(r);
  if (ld_req_admit_body(r, &e)) return answer_error(c, &e);
  c->state = H1_WORK;
  if (ld_req_run(c->n, r) == 0) answer(c, &r->out); /* else ld_h1_answer_back brings it back */
}

/* n bytes of the input buffer behind the head are used: the rest moves up to the head. */
static void consume(struct ld_h1_conn *c, size_t n) {
  size_t after = c->head_len + n;
  LNC_ASSERT(after <= c->in_len);
  memmove(c->in + c->head_len, c->in + after, c->in_len - after);
  c->in_len -= n;
}

/* The body bytes behind the head: kept (ld_req_take_body bounds them) as the framing says.
 * 1 when the body is all in, 0 when more must be read, -1 when it was answered (malformed
 * chunked framing: 400; over max_body_bytes: 413 at once, the rest lingering). */
static int read_body(struct ld_h1_conn *c) {
  struct ld_err e;
  for (;;) {
    char *p = c->in + c->head_len;
    size_t have = c->in_len - c->head_len;
    if (!c->chunk || c->chunk == CH_DATA) {
      size_t n = have < c->body_left ? have : (size_t)c->body_left;
      if (n) ld_req_take_body(c->r, p, n);
      consume(c, n);
      c->body_left -= n;
      if (c->r->body_too_big) {
        c->r->linger = true;
        ld_errf(&e, LD_TOO_LARGE, "request body is over max_body_bytes (%llu)", (unsigned long long)c->r->lim.max_body);
        return answer_error(c, &e), -1;
      }
      if (c->body_left) return 0;
      if (!c->chunk) return 1;
      c->chunk = CH_DATA_CRLF;
      continue;
    }
    size_t used = 0;
    int rc;
    if (c->chunk == CH_DATA_CRLF) {
      if (have < 2) return 0;
      if (memcmp(p, "\r\n", 2)) return ld_errf(&e, LD_INVALID, "a chunk's data is not followed by CRLF"), c->r->framing_bad = true, answer_error(c, &e), -1;
      used = 2;
      c->chunk = CH_SIZE;
    } else if (c->chunk == CH_SIZE) {
      uint64_t size = 0;
      if (!(rc = ld_h1_chunk_size(p, have, &size, &used, &e))) return 0;
      if (rc < 0) return c->r->framing_bad = true, answer_error(c, &e), -1;
      if (size > c->r->lim.max_body - (c->r->body.len < c->r->lim.max_body ? c->r->body.len : c->r->lim.max_body)) {
        c->r->linger = true;
        ld_errf(&e, LD_TOO_LARGE, "request body is over max_body_bytes (%llu): a chunk of %llu bytes",
                (unsigned long long)c->r->lim.max_body, (unsigned long long)size);
        consume(c, used);
        return answer_error(c, &e), -1;
      }
      c->body_left = size;
      c->chunk = size ? CH_DATA : CH_TRAILER;
    } else {
      if (!(rc = ld_h1_trailer_line(p, have, &used, &e))) return 0;
      if (rc < 0 || (c->trailer_bytes += used) > LD_H1_CHUNK_LINE_MAX * 4) {
        if (rc > 0) ld_errf(&e, LD_HEADERS_TOO_LARGE, "a trailer section over %d bytes", LD_H1_CHUNK_LINE_MAX * 4);
        return c->r->framing_bad = true, answer_error(c, &e), -1;
      }
      if (rc == 2) {
        consume(c, used);
        return 1;
      }
    }
    consume(c, used);
  }
}

/* The head of the next request: 1 in (c->head_len), 0 more to read, -1 answered (refused),
 * -2 the connection closed (no memory for the refusal; c is gone). */
static int read_head(struct ld_h1_conn *c) {
  struct ld_err e;
  /* RFC 9112 §2.2: empty lines before a request line are ignored (some clients send a CRLF
   * after a body). */
  size_t skip = 0;
  while (c->in_len - skip >= 2 && c->in[skip] == '\r' && c->in[skip + 1] == '\n') skip += 2;
  if (skip) {
    memmove(c->in, c->in + skip, c->in_len - skip);
    c->in_len -= skip;
    c->scan = 0;
  }
  long end = ld_h1_head_end(c->in, c->in_len, &c->scan, &e);
  if (end > 0) {
    c->head_len = (size_t)end;
    c->scan = 0;
    return 1;
  }
  if (end < 0) return refuse_unparsed(c, &e) ? -1 : -2;
  if (c->in_len < H1_IN_CAP) return 0;
  if (!memchr(c->in, '\n', c->in_len))
    ld_errf(&e, LD_URI_TOO_LONG, "request line over %u bytes (send long id lists in a POST body)", H1_IN_CAP);
  else
    ld_errf(&e, LD_HEADERS_TOO_LARGE, "request line and headers over %u bytes", H1_IN_CAP);
  /* The head is unparsed: its method and target are cut where the line allows, for the
   * answer's shape (a Connect path gets Connect's error body). */
  char *sp = memchr(c->in, ' ', c->in_len);
  char *sp2 = sp ? memchr(sp + 1, ' ', c->in_len - (size_t)(sp + 1 - c->in)) : NULL;
  if (sp && sp - c->in < 16) *sp = 0, c->h.method = c->in;
  if (sp && sp2) *sp2 = 0, c->h.target = sp + 1;
  return refuse_unparsed(c, &e) ? -1 : -2;
}

/* The request is over (its answer out): finished, and the connection waits for the next. */
static void request_done(struct ld_h1_conn *c) {
  struct ld_req *r = c->r;
  ld_conn_request_done(c->n, c->k);
  if (r->route_s > 0) {
    /* A connection whose requests take long to route (a training batch: milliseconds of
     * decoding and copying) is heavy (server.c crowded); light again below half the mark
     * (hysteresis: a batch of the same size can land on either side of one mark). */
    if (r->route_s > LD_HEAVY_ROUTE_S)
      c->heavy = true;
    else if (r->route_s < LD_HEAVY_ROUTE_S / 2)
      c->heavy = false;
  }
  conn_free_request(c, false);
  memmove(c->in, c->in + c->head_len, c->in_len - c->head_len);
  c->in_len -= c->head_len;
  c->head_len = 0;
  c->state = H1_HEAD;
}

/* Whether a connection closing after its answer lingers (conns.c): a client may still be
 * sending what was not read (a body refused before it was read, a head too long, bytes behind
 * a request whose framing was refused), and closing with unread bytes sends a reset, which
 * can destroy the answer before the client reads it. */
static bool wants_linger(const struct ld_h1_conn *c) {
  return !c->peer_closed && (c->r->linger || c->r->framing_bad || c->r->status == 413 || c->in_len > c->head_len);
}

/* A head or body needs more bytes: read when they come, unless the client has sent its last.
 * false: closed. */
static bool wait_for_bytes(struct ld_h1_conn *c) {
  if (c->peer_closed) return conn_close(c, false), false;
  watch(c, EPOLLIN | EPOLLRDHUP);
  return true;
}

/* Everything the buffered bytes allow: heads parsed, bodies taken, requests run, answers
 * written. Returns false when the connection was closed. */
static bool advance(struct ld_h1_conn *c) {
  for (;;) {
    switch (c->state) {
    case H1_HEAD: {
      int rc = read_head(c);
      if (rc == 0) return wait_for_bytes(c);
      if (rc == -2 || (rc > 0 && !request_begin(c))) return false; /* closed: c is gone */
      break;
    }
    case H1_BODY: {
      int rc = read_body(c);
      if (rc == 0) return wait_for_bytes(c);
      if (rc > 0) request_run(c);
      break;
    }
    case H1_WORK:
      return true;
    case H1_SEND: {
      int rc = flush(c);
      if (rc < 0) return conn_close(c, false), false;
      if (rc == 0) return true;
      if (c->close_after) return conn_close(c, wants_linger(c)), false;
      request_done(c);
      break;
    }
    default:
      return false;
    }
  }
}

/* Reads what the socket has into the input buffer (HEAD and BODY only). false: closed. */
static bool conn_read(struct ld_h1_conn *c) {
  for (int i = 0; i < H1_READS_PER_TURN && c->in_len < H1_IN_CAP; i++) {
    ssize_t r = recv(c->fd, c->in + c->in_len, H1_IN_CAP - c->in_len, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (r < 0) return conn_close(c, false), false; /* reset, or failed */
    if (r == 0) {
      c->peer_closed = true;
      break;
    }
    c->in_len += (size_t)r;
    c->last_io = lnc_now_s();
    /* A short read drained the socket (level-triggered: more bytes bring another event):
     * asking again would only return EAGAIN, a system call per request. */
    if (c->in_len < H1_IN_CAP) break;
  }
  return true;
}

static void conn_event(struct ld_h1_conn *c, uint32_t ev) {
  /* Bytes behind a request at work (pipelined), or the client's end: read once it is
   * answered. Until then the socket leaves the set, else each turn would report it again.
   * (It stays in the set while the request works, which costs nothing when nothing comes:
   * taking it out and back in was two system calls per request parked on the device.) */
  if (c->state == H1_WORK) return watch(c, 0);
  if (c->state == H1_HEAD || c->state == H1_BODY) {
    if (!conn_read(c)) return;
  } else if (c->state == H1_SEND && (ev & (EPOLLHUP | EPOLLERR)) && !(ev & EPOLLOUT)) {
    return conn_close(c, false);
  }
  advance(c);
}

/* ---- the thread's side ------------------------------------------------------------------------ */
void ld_net_add_http1(struct ld_net *n, int fd, const struct sockaddr *addr, unsigned addrlen, double accepted) {
  struct ld_h1_conn *c = calloc(1, sizeof *c);
  char *in = c ? malloc(H1_IN_CAP) : NULL;
  if (!in || addrlen > sizeof c->addr) {
    free(c);
    free(in);
    close(fd);
    __atomic_sub_fetch(&n->conns, 1, __ATOMIC_RELAXED);
    ld_conn_addr_release(ld_conn_addr_bucket(addr));
    return;
  }
  c->n = n, c->fd = fd, c->in = in, c->state = H1_HEAD;
  c->last_io = accepted > 0 ? accepted : lnc_now_s();
  memcpy(&c->addr, addr, addrlen);
  c->addrlen = addrlen;
  c->bucket = ld_conn_addr_bucket(addr);
  /* An answer leaves in one write of its head and body: Nagle would only hold a pipelined
   * answer's last segment back behind the ACK of the one before. */
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  c->next = n->h1_conns;
  if (n->h1_conns) n->h1_conns->prev = c;
  n->h1_conns = c;
  ld_server_count_conn(+1);
  c->k = ld_conn_track_fd(n, fd, accepted); /* waiting: the header deadline and eviction */
  /* Its first bytes are often in already (h2.c looked at them): read now, not a turn later. */
  if (conn_read(c)) advance(c);
}

void ld_h1_answer_back(struct ld_req *r) {
  struct ld_h1_conn *c = r->h1;
  LNC_ASSERT(r->stage == LD_STAGE_ANSWERED && c->state == H1_WORK && c->r == r);
  answer(c, &r->out);
  advance(c);
}

int ld_h1_start(struct ld_net *n) {
  n->h1_epfd = epoll_create1(EPOLL_CLOEXEC);
  return n->h1_epfd;
}

void ld_h1_service(struct ld_net *n) {
  struct epoll_event ev[64];
  int k = epoll_wait(n->h1_epfd, ev, 64, 0);
  for (int i = 0; i < k; i++) conn_event(ev[i].data.ptr, ev[i].events);
}

/* Deadlines conns.c does not keep, checked at most every 100 ms: a connection whose socket
 * moved no byte for request_timeout_ms while a request was read or its answer sent (a client
 * gone quiet mid-request, or not reading its answer: closed, the answer's memory freed) or
 * while it waited for one; one conns.c could not track (no memory) idle past the header
 * deadline. */
int ld_h1_sweep(struct ld_net *n, const struct ld_limits *lim) {
  if (!n->h1_conns) return -1;
  double now = lnc_now_s();
  if (now < n->h1_next_sweep) return (int)((n->h1_next_sweep - now) * 1000) + 1;
  n->h1_next_sweep = now + 0.1;
  double hdr = (double)lim->header_timeout_ms / 1000, req = (double)lim->timeout_ms / 1000;
  for (struct ld_h1_conn *c = n->h1_conns, *next; c; c = next) {
    next = c->next;
    bool reading = c->state == H1_HEAD || c->state == H1_BODY;
    if (((c->state == H1_SEND || reading) && now - c->last_io > req) || (!c->k && reading && now - c->last_io > hdr))
      conn_close(c, false);
  }
  return 100;
}

void ld_h1_stop(struct ld_net *n) {
  while (n->h1_conns) conn_close(n->h1_conns, false);
}
