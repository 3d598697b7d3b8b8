/* HTTP/2 cleartext with prior knowledge (h2c: what gRPC clients speak inside a pod), served on
 * the network threads' own loops beside HTTP/1.1 (h1.c), with libnghttp2 doing the framing
 * (HPACK, flow control, settings) and lanced owning the sockets.
 *
 * Same port as HTTP/1.1: a new connection's first bytes are looked at (MSG_PEEK) before h1.c
 * sees it. HTTP/2's 24-byte preface ("PRI * HTTP/2.0...") keeps it here; any other first bytes
 * hand it to h1.c untouched. Each thread watches its HTTP/2 sockets through one epoll fd of
 * its own, waited on by the same io_uring wait as HTTP/1.1's epoll fd and the device reads
 * (server.c net_main): still one loop per thread, and a separate port was not needed (nor a
 * second listener to name in lanced.socket).
 *
 * A stream is one request, made and run by server.c's request life exactly as an HTTP/1.1
 * request is: the same admission (max_inflight, bodies' memory, unsent answers), the same
 * loop tasks and take threads, the same routes. Its answer comes back here (ld_h2_answer_back) to
 * be framed. gRPC requests (content-type application/grpc) are routed to grpc.c.
 *
 * Ownership: a connection (struct h2_conn) and its streams belong to their network thread. A
 * stream whose request is at work elsewhere (a parked task, a take thread) outlives its
 * client's reset or the connection's close; it and the connection are freed when the last
 * such request comes back. */
#include "lanced.h"
#include "config.h"
#include "request.h"
#include "routes.h"
#include "server.h"
#include <ctype.h>
#include <errno.h>
#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

/* RFC 9113 §3.4: the client connection preface. */
#define H2_PREFACE     "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define H2_PREFACE_LEN 24
/* SETTINGS_MAX_CONCURRENT_STREAMS we announce, and the requests a connection may have at
 * work at once, streams its client already reset included (a rapid reset's streams end at
 * once in nghttp2's count but not in ours). */
#define H2_MAX_STREAMS 128
/* The header list a request may send (SETTINGS_MAX_HEADER_LIST_SIZE, RFC 9113 §6.5.2 sizes:
 * name + value + 32 per field), as HTTP/1.1's 32 KiB connection memory bounds its headers. */
#define H2_MAX_HEADER_LIST (32u * 1024)
#define H2_MAX_FIELDS      64                  /* regular header fields kept per request */
#define H2_MAX_ARGS        LD_QUERY_MAX_PARAMS /* query parameters, as HTTP/1.1's */
#define H2_WINDOW          (1u << 20)          /* each stream's receive window: request bodies are small */
/* Rapid reset (CVE-2023-44487): RST_STREAMs a client may send, a burst then per second,
 * before nghttp2 ends the connection; CONTINUATION frames after one HEADERS (a flood of them
 * held the decoder) likewise. */
#define H2_RESET_BURST       1000
#define H2_RESET_RATE        33
#define H2_MAX_CONTINUATIONS 8
#define H2_READ_CHUNK        16384
#define H2_READS_PER_TURN    8
#define H2_OUT_BATCH         (64u * 1024) /* frames written per send */ /* reads of one connection per event, so one client cannot hog a turn */

/* What /metrics reports (atomics: read by the metrics thread). */
static uint64_t stat_open, stat_refused, stat_protocol, stat_stalled;

void ld_h2_stats(struct ld_h2_stats *s) {
  s->open = __atomic_load_n(&stat_open, __ATOMIC_RELAXED);
  s->refused = __atomic_load_n(&stat_refused, __ATOMIC_RELAXED);
  s->protocol_errors = __atomic_load_n(&stat_protocol, __ATOMIC_RELAXED);
  s->stalled = __atomic_load_n(&stat_stalled, __ATOMIC_RELAXED);
}

static void count(uint64_t *stat, int delta) {
  if (delta > 0)
    __atomic_add_fetch(stat, (uint64_t)delta, __ATOMIC_RELAXED);
  else
    __atomic_sub_fetch(stat, (uint64_t)-delta, __ATOMIC_RELAXED);
}

enum { C_SNIFF = 1,
       C_OPEN,
       C_CLOSED };

struct h2_conn {
  struct ld_net *n;
  struct h2_conn *prev, *next; /* the thread's list (open and sniffing ones; closed ones leave it) */
  int fd, state;
  nghttp2_session *s;
  struct ld_h2_stream *streams; /* every stream with a record, open or at work */
  int live;                     /* streams with a record: the connection is freed at 0 once closed */
  int at_work;                  /* of those, requests not yet answered */
  double accepted, last_io;
  bool goaway;  /* sent (draining): no new streams */
  bool broken;  /* ended by nghttp2 for breaking the protocol (counted once) */
  uint8_t *out; /* bytes nghttp2 gave that the socket did not take yet */
  size_t out_len, out_off, out_cap;
  bool epollout;           /* EPOLLOUT asked for */
  uint32_t bucket;         /* per-address count (accept.c), given back at close */
  struct ld_conn *waiting; /* sniffing: its place among the waiting connections (conns.c) */
  socklen_t addrlen;
  struct sockaddr_storage addr;
};

struct h2_field {
  char *name, *value;
};

struct ld_h2_stream {
  struct h2_conn *c;
  struct ld_h2_stream *prev, *next;
  int32_t id;
  bool closed;       /* nghttp2 is done with it (answered, reset, or the connection closed) */
  bool answered;     /* its answer was submitted */
  bool headers_over; /* its header list passed H2_MAX_HEADER_LIST */
  bool body_coming;
  bool reset;       /* reset by the sweep (stalled), once */
  struct ld_req *r; /* made when its headers are in */
  double started, last_progress;
  char *method, *path;
  size_t header_bytes;
  struct h2_field fields[H2_MAX_FIELDS];
  int nfields;
  char *query; /* the path's query, split in place into args */
  const char *arg_key[H2_MAX_ARGS], *arg_val[H2_MAX_ARGS];
  int nargs;
  const char *arg_twice;
  size_t planned, sent;   /* of r->out.body: framed by nghttp2 (read_body), written (send_data) */
  char grpc_message[700]; /* its grpc-message trailer, percent-encoded */
};

/* ---- lookups for the routes (request.h) ----------------------------------------------- */
const char *ld_h2_header(const struct ld_h2_stream *st, const char *name) {
  for (int i = 0; i < st->nfields; i++)
    if (!strcasecmp(st->fields[i].name, name)) return st->fields[i].value;
  return NULL;
}

const char *ld_h2_arg(const struct ld_h2_stream *st, const char *name) {
  for (int i = 0; i < st->nargs; i++)
    if (!strcmp(st->arg_key[i], name)) return st->arg_val[i];
  return NULL;
}

const char *ld_h2_arg_twice(const struct ld_h2_stream *st) { return st->arg_twice; }

const char ld_query_too_many[] = "(more parameters than the query may hold)";

int ld_h2_split_query(char *query, const char **keys, const char **vals, int max, const char **twice) {
  int n = 0;
  *twice = NULL;
  for (char *p = query; p && *p;) {
    char *amp = strchr(p, '&');
    if (amp) *amp = 0;
    char *eq = strchr(p, '=');
    if (eq) *eq = 0;
    char *val = eq ? eq + 1 : p + strlen(p);
    for (char *q = p; *q; q++)
      if (*q == '+') *q = ' ';
    for (char *q = val; *q; q++)
      if (*q == '+') *q = ' ';
    ld_url_unescape(p);
    ld_url_unescape(val);
    if (*p) {
      for (int i = 0; i < n && !*twice; i++)
        if (!strcmp(keys[i], p)) *twice = keys[i];
      if (n < max)
        keys[n] = p, vals[n++] = val;
      else if (!*twice)
        *twice = ld_query_too_many;
    }
    p = amp ? amp + 1 : NULL;
  }
  return n;
}

/* ---- streams ---------------------------------------------------------------------------- */
static struct ld_h2_stream *stream_new(struct h2_conn *c, int32_t id) {
  struct ld_h2_stream *st = calloc(1, sizeof *st);
  if (!st) return NULL;
  st->c = c;
  st->id = id;
  st->started = st->last_progress = lnc_now_s();
  st->next = c->streams;
  if (c->streams) c->streams->prev = st;
  c->streams = st;
  c->live++;
  return st;
}

static void conn_free(struct h2_conn *c);

/* The stream's record goes: its request finished, its fields freed; the connection with it
 * when it was closed and this was its last. */
static void stream_free(struct ld_h2_stream *st) {
  struct h2_conn *c = st->c;
  if (st->r) ld_req_finish(st->r, (struct sockaddr *)&c->addr, !st->answered);
  for (int i = 0; i < st->nfields; i++) free(st->fields[i].name), free(st->fields[i].value);
  free(st->method);
  free(st->path);
  free(st->query);
  if (st->prev)
    st->prev->next = st->next;
  else
    c->streams = st->next;
  if (st->next) st->next->prev = st->prev;
  free(st);
  if (--c->live == 0 && c->state == C_CLOSED) conn_free(c);
}

/* Whether its request is somewhere else (a parked task, a take thread, answered and queued
 * back): then the record waits for it. */
static bool at_work(const struct ld_h2_stream *st) {
  return st->r && (st->r->stage == LD_STAGE_TASK || st->r->stage == LD_STAGE_TAKE_THREAD ||
                   st->r->stage == LD_STAGE_ANSWERED);
}

/* nghttp2 closed the stream (or the connection went): freed now unless its request is at work. */
static void stream_closed(struct ld_h2_stream *st) {
  st->closed = true;
  if (!at_work(st)) stream_free(st);
}

/* ---- answers ---------------------------------------------------------------------------- */
/* How much of the answer the next DATA frame carries. Its bytes are not copied into nghttp2's
 * frame buffer (NO_COPY): send_data puts them beside the frame's header in the connection's
 * output, one copy instead of two. */
static ssize_t read_body(nghttp2_session *s, int32_t id, uint8_t *buf, size_t length, uint32_t *flags,
                         nghttp2_data_source *src, void *user) {
  (void)s, (void)id, (void)buf, (void)user;
  struct ld_h2_stream *st = src->ptr;
  struct ld_response *out = &st->r->out;
  size_t left = out->body.len - st->planned, n = left < length ? left : length;
  st->planned += n;
  *flags |= NGHTTP2_DATA_FLAG_NO_COPY;
  if (st->planned == out->body.len) {
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    if (out->grpc_status) { /* gRPC: the status follows the message as trailers */
      *flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
      nghttp2_nv tr[] = {{(uint8_t *)"grpc-status", (uint8_t *)out->grpc_status, 11, strlen(out->grpc_status),
                          NGHTTP2_NV_FLAG_NONE}};
      if (nghttp2_submit_trailer(s, id, tr, 1)) return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
  }
  return (ssize_t)n;
}

static bool out_append(struct h2_conn *c, const void *p, size_t n);

/* A DATA frame read_body planned: its header, its bytes and any padding appended to the
 * connection's output, in the order nghttp2 serializes frames (conn_flush). */
static int send_data(nghttp2_session *s, nghttp2_frame *f, const uint8_t *framehd, size_t length,
                     nghttp2_data_source *src, void *user) {
  (void)s;
  struct h2_conn *c = user;
  struct ld_h2_stream *st = src->ptr;
  static const uint8_t zeros[256];
  size_t pad = f->data.padlen;
  uint8_t padlen = (uint8_t)(pad ? pad - 1 : 0);
  LNC_ASSERT(st->sent + length <= st->r->out.body.len && pad <= sizeof zeros);
  if (!out_append(c, framehd, 9) || (pad && !out_append(c, &padlen, 1)) ||
      !out_append(c, st->r->out.body.data + st->sent, length) || (pad > 1 && !out_append(c, zeros, pad - 1)))
    return NGHTTP2_ERR_CALLBACK_FAILURE;
  st->sent += length;
  st->last_progress = lnc_now_s();
  return 0;
}

#define NV(n, v) ((nghttp2_nv){(uint8_t *)(n), (uint8_t *)(v), strlen(n), strlen(v), NGHTTP2_NV_FLAG_NONE})

/* grpc-message is percent-encoded (gRPC over HTTP/2: bytes outside printable ASCII and '%'). */
static void grpc_message_encode(const char *msg, char *dst, size_t cap) {
  static const char hex[] = "0123456789ABCDEF";
  size_t w = 0;
  for (const unsigned char *p = (const unsigned char *)msg; *p && w + 4 < cap; p++) {
    if (*p >= 0x20 && *p <= 0x7e && *p != '%')
      dst[w++] = (char)*p;
    else
      dst[w++] = '%', dst[w++] = hex[*p >> 4], dst[w++] = hex[*p & 15];
  }
  dst[w] = 0;
}

/* Submits r->out on its stream: headers, the body through read_body, and for gRPC the status
 * as trailers (or, with no message, in the headers: Trailers-Only). */
static void send_error(struct ld_h2_stream *st, const struct ld_err *e);

static void send_answer(struct ld_h2_stream *st) {
  struct ld_req *r = st->r;
  struct ld_response *out = &r->out;
  /* DATA frames come from one buffer: an Arrow answer's refs (h1.c sends them where they
   * lie) are copied into it here. */
  if (out->refs && ld_response_flatten(out)) {
    struct ld_err e;
    ld_errf(&e, LD_EXHAUSTED, "a %zu-byte answer could not be put together (out of memory, or its file unreadable)",
            ld_response_len(out));
    return send_error(st, &e);
  }
  nghttp2_nv nv[10];
  size_t k = 0;
  char status[8], retry[16];
  snprintf(status, sizeof status, "%d", out->status);
  nv[k++] = NV(":status", status);
  if (out->content_type) nv[k++] = NV("content-type", out->content_type);
  if (out->allow) nv[k++] = NV("allow", out->allow);
  if (out->retry_after) {
    snprintf(retry, sizeof retry, "%d", out->retry_after);
    nv[k++] = NV("retry-after", retry);
  }
  char extra[64]; /* HTTP/2 field names are lowercase (RFC 9113 §8.2.1): "Accept-Post" is not one */
  if (out->extra_name && strlen(out->extra_name) < sizeof extra) {
    size_t i = 0;
    for (; out->extra_name[i]; i++) extra[i] = (char)tolower((unsigned char)out->extra_name[i]);
    extra[i] = 0;
    nv[k++] = NV(extra, out->extra_value);
  }
  if (out->content_encoding) nv[k++] = NV(r->grpc ? "grpc-encoding" : "content-encoding", out->content_encoding);
  bool head = !strcmp(r->method, "HEAD");
  bool trailers_only = out->grpc_status && !out->body.len;
  if (trailers_only) {
    nv[k++] = NV("grpc-status", out->grpc_status);
    grpc_message_encode(out->grpc_message ? out->grpc_message : "", st->grpc_message, sizeof st->grpc_message);
    nv[k++] = NV("grpc-message", st->grpc_message);
  }
  nghttp2_data_provider prd = {.source.ptr = st, .read_callback = read_body};
  bool with_body = out->body.len && !head;
  r->status = out->grpc_http ? out->grpc_http : out->status;
  r->bytes_out = with_body ? out->body.len : 0;
  r->stage = LD_STAGE_SENT;
  st->answered = true;
  if (nghttp2_submit_response(st->c->s, st->id, nv, k, with_body ? &prd : NULL)) {
    nghttp2_submit_rst_stream(st->c->s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_INTERNAL_ERROR);
    ld_req_answered(r, 0);
    return;
  }
  ld_req_answered(r, r->bytes_out);
}

/* e in the shape of the stream's protocol (gRPC status, Connect or REST error body), sent. */
static void send_error(struct ld_h2_stream *st, const struct ld_err *e) {
  struct ld_req *r = st->r;
  ld_response_drop(&r->out);
  memset(&r->out, 0, sizeof r->out);
  if (r->grpc)
    ld_grpc_error(&r->out, e);
  else
    ld_error_for(r, &r->out, e);
  send_answer(st);
}

/* ---- requests --------------------------------------------------------------------------- */
/* Its headers are in: the request is made and, what can be refused before a body, refused. */
static void request_begin(struct ld_h2_stream *st, bool end_stream) {
  struct h2_conn *c = st->c;
  struct ld_err e;
  if (!st->method || !st->path) return; /* nghttp2 resets a request without them */
  char *q = strchr(st->path, '?');
  if (q) {
    st->query = strdup(q + 1);
    *q = 0;
  }
  st->nargs = ld_h2_split_query(st->query, st->arg_key, st->arg_val, H2_MAX_ARGS, &st->arg_twice);
  ld_url_unescape(st->path);
  struct ld_req *r = ld_req_new(st->path, st->method);
  if (!r) {
    nghttp2_submit_rst_stream(c->s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_INTERNAL_ERROR);
    return;
  }
  st->r = r;
  r->h2 = st;
  r->net = c->n;
  const char *ct = ld_h2_header(st, "content-type");
  r->grpc = ct && !strncasecmp(ct, "application/grpc", 16) && strncasecmp(ct, "application/grpc-web", 20);
  st->body_coming = !end_stream;
  if (atomic_load(&ld_draining) == LD_DRAIN_CLOSED)
    ld_errf(&e, LD_UNAVAILABLE, "shutting down");
  else if (st->headers_over)
    ld_errf(&e, LD_HEADERS_TOO_LARGE, "request header list is over %u bytes", H2_MAX_HEADER_LIST);
  else if (!ld_req_refuse_busy(r, st->body_coming, false, &e) &&
           !ld_req_refuse_declared(r, ld_h2_header(st, "content-length"), &e))
    return;
  send_error(st, &e);
}

/* Its body is in (END_STREAM): admitted to work and run; answered now or when it comes back. */
static void request_run(struct ld_h2_stream *st) {
  struct ld_req *r = st->r;
  if (!r || st->answered || r->stage != LD_STAGE_NEW) return;
  struct ld_err e;
  ld_req_body_release(r);
  if (ld_req_admit_body(r, &e)) return send_error(st, &e);
  st->c->at_work++;
  if (ld_req_run(st->c->n, r) == 0) {
    st->c->at_work--;
    send_answer(st);
  }
}

/* ---- nghttp2 callbacks -------------------------------------------------------------------- */
static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *f, void *user) {
  struct h2_conn *c = user;
  if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
  /* Streams its client reset while their requests work count here until those end. */
  if (c->goaway || c->live >= H2_MAX_STREAMS) {
    count(&stat_refused, 1);
    nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, f->hd.stream_id, NGHTTP2_REFUSED_STREAM);
    return 0;
  }
  struct ld_h2_stream *st = stream_new(c, f->hd.stream_id);
  if (!st) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  nghttp2_session_set_stream_user_data(s, f->hd.stream_id, st);
  return 0;
}

static char *dup_n(const uint8_t *p, size_t n) {
  char *d = malloc(n + 1);
  if (d) memcpy(d, p, n), d[n] = 0;
  return d;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t namelen,
                     const uint8_t *value, size_t valuelen, uint8_t flags, void *user) {
  (void)flags, (void)user;
  struct ld_h2_stream *st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
  if (!st || st->r || f->headers.cat != NGHTTP2_HCAT_REQUEST) return 0; /* refused, or trailers: ignored */
  st->header_bytes += namelen + valuelen + 32;
  if (st->header_bytes > H2_MAX_HEADER_LIST) {
    st->headers_over = true; /* decoded still (HPACK's state is the connection's), kept no more */
    return 0;
  }
  char **slot = NULL;
  if (namelen == 7 && !memcmp(name, ":method", 7))
    slot = &st->method;
  else if (namelen == 5 && !memcmp(name, ":path", 5))
    slot = &st->path;
  else if (name[0] == ':' || st->nfields == H2_MAX_FIELDS)
    return 0;
  char *v = dup_n(value, valuelen);
  if (!v) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  /* A NUL in a value would cut it short where it is read as a C string: 0x01, refused later. */
  for (size_t i = 0; i < valuelen; i++)
    if (!v[i]) v[i] = 0x01;
  if (slot) {
    free(*slot);
    *slot = v;
    return 0;
  }
  char *k = dup_n(name, namelen);
  if (!k) return free(v), NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  st->fields[st->nfields++] = (struct h2_field){k, v};
  return 0;
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *f, void *user) {
  (void)user;
  struct ld_h2_stream *st = f->hd.stream_id ? nghttp2_session_get_stream_user_data(s, f->hd.stream_id) : NULL;
  if (!st) return 0;
  bool end = f->hd.flags & NGHTTP2_FLAG_END_STREAM;
  if (f->hd.type == NGHTTP2_HEADERS && f->headers.cat == NGHTTP2_HCAT_REQUEST && !st->r) request_begin(st, end);
  if (end && st->r && !st->answered) request_run(st);
  return 0;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data, size_t len, void *user) {
  (void)flags, (void)user;
  struct ld_h2_stream *st = nghttp2_session_get_stream_user_data(s, id);
  if (st && st->r && !st->answered) ld_req_take_body(st->r, (const char *)data, len);
  return 0;
}

static int on_stream_close(nghttp2_session *s, int32_t id, uint32_t code, void *user) {
  (void)code, (void)user;
  struct ld_h2_stream *st = nghttp2_session_get_stream_user_data(s, id);
  if (st) {
    nghttp2_session_set_stream_user_data(s, id, NULL);
    stream_closed(st);
  }
  return 0;
}

/* The connection broke the protocol or its limits: counted once, whichever way nghttp2 ended it
 * (an error from mem_recv, or a GOAWAY with an error code it queued). */
static void protocol_error(struct h2_conn *c) {
  if (!c->broken) count(&stat_protocol, 1);
  c->broken = true;
}

static int on_frame_send(nghttp2_session *s, const nghttp2_frame *f, void *user) {
  (void)s;
  if (f->hd.type == NGHTTP2_GOAWAY && f->goaway.error_code != NGHTTP2_NO_ERROR) protocol_error(user);
  return 0;
}

static nghttp2_session_callbacks *callbacks;
static nghttp2_option *options;
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static bool setup_ok;

static void setup(void) {
  if (nghttp2_session_callbacks_new(&callbacks) || nghttp2_option_new(&options)) return;
  nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, on_begin_headers);
  nghttp2_session_callbacks_set_on_header_callback(callbacks, on_header);
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, on_frame_recv);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, on_data);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, on_stream_close);
  nghttp2_session_callbacks_set_send_data_callback(callbacks, send_data);
  nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, on_frame_send);
  nghttp2_option_set_stream_reset_rate_limit(options, H2_RESET_BURST, H2_RESET_RATE);
  nghttp2_option_set_max_continuations(options, H2_MAX_CONTINUATIONS);
  nghttp2_option_set_max_settings(options, 32);
  nghttp2_option_set_max_outbound_ack(options, 1000);
  setup_ok = true;
}

/* ---- connections ---------------------------------------------------------------------------- */
static void conn_unlink(struct h2_conn *c) {
  struct ld_net *n = c->n;
  if (c->prev)
    c->prev->next = c->next;
  else
    n->h2_conns = c->next;
  if (c->next) c->next->prev = c->prev;
  c->prev = c->next = NULL;
}

static void conn_free(struct h2_conn *c) {
  LNC_ASSERT(c->state == C_CLOSED && c->live == 0);
  free(c->out);
  free(c);
}

/* Closes the socket and the session; streams whose requests are at work stay until those
 * come back (conn_free then). */
static void conn_close(struct h2_conn *c) {
  if (c->state == C_CLOSED) return;
  struct ld_net *n = c->n;
  if (c->state == C_OPEN) count(&stat_open, -1);
  epoll_ctl(n->h2_epfd, EPOLL_CTL_DEL, c->fd, NULL);
  close(c->fd);
  ld_conn_untrack_fd(n, c->waiting);
  c->waiting = NULL;
  ld_server_count_conn(-1);
  __atomic_sub_fetch(&n->conns, 1, __ATOMIC_RELAXED);
  ld_conn_addr_release(c->bucket);
  conn_unlink(c);
  c->state = C_CLOSED;
  if (c->s) nghttp2_session_del(c->s); /* calls no stream-close callbacks: done below */
  c->s = NULL;
  c->live++; /* held while its streams go */
  for (struct ld_h2_stream *st = c->streams, *next; st; st = next) {
    next = st->next;
    if (!st->closed) stream_closed(st);
  }
  if (--c->live == 0) conn_free(c);
}

/* Level-triggered once open (a turn reads at most H2_READS_PER_TURN chunks; the rest is read
 * on the next). Edge-triggered while its first bytes are awaited: part of a preface sits
 * unread in the socket, and level-triggered would report it on every turn until the rest came. */
static int watch(struct h2_conn *c, int op, bool out) {
  uint32_t mode = c->state == C_SNIFF ? EPOLLET : 0;
  struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | mode | (out ? EPOLLOUT : 0), .data.ptr = c};
  c->epollout = out;
  return epoll_ctl(c->n->h2_epfd, op, c->fd, &ev);
}

static bool out_append(struct h2_conn *c, const void *p, size_t n) {
  if (c->out_len + n > c->out_cap) {
    size_t cap = c->out_len + n + H2_OUT_BATCH;
    uint8_t *buf = realloc(c->out, cap);
    if (!buf) return false;
    c->out = buf, c->out_cap = cap;
  }
  memcpy(c->out + c->out_len, p, n);
  c->out_len += n;
  return true;
}

/* Writes what nghttp2 has to send, keeping what the socket would not take; false when the
 * connection is over (an error, or nothing left to read or write). */
static bool conn_flush(struct h2_conn *c) {
  for (;;) {
    while (c->out_off < c->out_len) {
      ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (!c->epollout) watch(c, EPOLL_CTL_MOD, true);
        return true;
      }
      if (w <= 0) return false;
      c->out_off += (size_t)w;
      c->last_io = lnc_now_s();
    }
    /* Frames gathered up to H2_OUT_BATCH, one send for many (copied: nghttp2's buffer is
     * valid only until its next call; DATA frames are appended by send_data meanwhile). */
    c->out_len = c->out_off = 0;
    while (c->out_len < H2_OUT_BATCH) {
      const uint8_t *data;
      ssize_t len = nghttp2_session_mem_send(c->s, &data);
      if (len < 0) return false;
      if (len == 0) break;
      if (!out_append(c, data, (size_t)len)) return false;
    }
    if (!c->out_len) break;
  }
  if (c->epollout) watch(c, EPOLL_CTL_MOD, false);
  return nghttp2_session_want_read(c->s) || nghttp2_session_want_write(c->s) || c->at_work > 0;
}

static bool conn_read(struct h2_conn *c) {
  uint8_t buf[H2_READ_CHUNK];
  for (int i = 0; i < H2_READS_PER_TURN; i++) {
    ssize_t r = recv(c->fd, buf, sizeof buf, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (r <= 0) return false; /* the client closed, or the connection failed */
    c->last_io = lnc_now_s();
    if (nghttp2_session_mem_recv(c->s, buf, (size_t)r) < 0) {
      protocol_error(c);
      conn_flush(c); /* the GOAWAY nghttp2 queued (a flood, a protocol error), on a best effort */
      return false;
    }
  }
  return true;
}

/* The preface is in: an HTTP/2 session, our SETTINGS queued. */
static int conn_open(struct h2_conn *c) {
  if (nghttp2_session_server_new2(&c->s, callbacks, c, options)) return -1;
  /* Frames go out as whole writes (conn_flush gathers them): Nagle would only hold an answer
   * back behind the ACK of the frames before it (a WINDOW_UPDATE, a SETTINGS ACK). */
  int one = 1;
  setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  nghttp2_settings_entry iv[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, H2_MAX_STREAMS},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, H2_WINDOW},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, H2_MAX_HEADER_LIST},
  };
  if (nghttp2_submit_settings(c->s, NGHTTP2_FLAG_NONE, iv, sizeof iv / sizeof iv[0])) return -1;
  c->state = C_OPEN;
  count(&stat_open, 1);
  c->last_io = lnc_now_s();
  ld_conn_untrack_fd(c->n, c->waiting); /* in a session now: its own deadlines */
  c->waiting = NULL;
  return 0;
}

/* The preface is in: served from here on (its bytes are read by nghttp2), or closed. */
static void open_or_close(struct h2_conn *c) {
  if (conn_open(c) || watch(c, EPOLL_CTL_MOD, false)) return conn_close(c);
  if (!conn_flush(c)) conn_close(c);
}

/* What the first bytes say: 1 HTTP/2's preface (all of it), 0 still a prefix of it (or none
 * yet), -1 something else (HTTP/1.1), -2 the client closed. */
static int peek_preface(int fd) {
  char b[H2_PREFACE_LEN];
  ssize_t r = recv(fd, b, sizeof b, MSG_PEEK);
  if (r < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -2;
  if (r == 0) return -2;
  if (memcmp(b, H2_PREFACE, (size_t)r)) return -1;
  return r == H2_PREFACE_LEN ? 1 : 0;
}

int ld_h2_sniff(struct ld_net *n, int fd, const struct sockaddr *addr, unsigned addrlen, double accepted) {
  int p = peek_preface(fd);
  if (p < 0 || !setup_ok) return 0; /* HTTP/1.1 reads it (and sees a close for itself) */
  struct h2_conn *c = calloc(1, sizeof *c);
  if (!c || addrlen > sizeof c->addr) {
    free(c);
    return 0;
  }
  c->n = n, c->fd = fd, c->state = C_SNIFF, c->accepted = accepted;
  memcpy(&c->addr, addr, addrlen);
  c->addrlen = addrlen;
  c->bucket = ld_conn_addr_bucket(addr);
  c->next = n->h2_conns;
  if (n->h2_conns) n->h2_conns->prev = c;
  n->h2_conns = c;
  if (watch(c, EPOLL_CTL_ADD, false)) { /* HTTP/1.1 then */
    conn_unlink(c);
    free(c);
    return 0;
  }
  /* A connection from here (the connection limit counts it); waiting for its first bytes
   * like any connection that has sent no request, under the header deadline and evicted
   * first over the limit (conns.c). */
  ld_server_count_conn(+1);
  c->waiting = ld_conn_track_fd(n, fd, accepted);
  if (p == 1) open_or_close(c);
  return 1;
}

/* A sniffing connection's bytes came: HTTP/2 on, handed to HTTP/1.1, or closed. */
static void sniff_ready(struct h2_conn *c) {
  int p = peek_preface(c->fd);
  if (p == 0) return;
  if (p == 1) return open_or_close(c);
  if (p == -2) return conn_close(c);
  struct ld_net *n = c->n; /* HTTP/1.1: the socket goes to h1.c, counted there from here */
  epoll_ctl(n->h2_epfd, EPOLL_CTL_DEL, c->fd, NULL);
  ld_conn_untrack_fd(n, c->waiting);
  ld_server_count_conn(-1);
  conn_unlink(c);
  ld_net_add_http1(n, c->fd, (struct sockaddr *)&c->addr, c->addrlen, c->accepted);
  free(c);
}

static void conn_event(struct h2_conn *c, uint32_t ev) {
  if (c->state == C_SNIFF) return sniff_ready(c);
  bool ok = true;
  if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) ok = conn_read(c);
  if (ok) ok = conn_flush(c);
  if (!ok) conn_close(c);
}

/* An answer back from a task or a take thread (server.c service_resumed), sent on its stream. */
void ld_h2_answer_back(struct ld_req *r) {
  struct ld_h2_stream *st = r->h2;
  struct h2_conn *c = st->c;
  c->at_work--;
  if (st->closed) { /* reset, or its connection closed, meanwhile */
    r->stage = LD_STAGE_SENT;
    stream_free(st);
    return;
  }
  send_answer(st);
  if (!conn_flush(c)) conn_close(c);
}

void ld_h2_service(struct ld_net *n) {
  struct epoll_event ev[64];
  int k = epoll_wait(n->h2_epfd, ev, 64, 0);
  for (int i = 0; i < k; i++) conn_event(ev[i].data.ptr, ev[i].events);
}

/* Tells c no new streams are taken (GOAWAY naming the last it took); it closes when those end. */
static void goaway(struct h2_conn *c) {
  if (c->state != C_OPEN || c->goaway) return;
  c->goaway = true;
  nghttp2_submit_goaway(c->s, NGHTTP2_FLAG_NONE, nghttp2_session_get_last_proc_stream_id(c->s),
                        NGHTTP2_NO_ERROR, NULL, 0);
}

/* Deadlines, checked at most every 100 ms: a preface not in within client_header_timeout_ms; an
 * idle connection past it (GOAWAY, then closed); a request not all in, or an answer making no
 * progress (a window its client never opens), for request_timeout_ms (the stream is reset); a
 * connection whose socket takes nothing for as long (closed). */
int ld_h2_sweep(struct ld_net *n, const struct ld_limits *lim) {
  if (!n->h2_conns) return -1;
  double now = lnc_now_s();
  if (now < n->h2_next_sweep) return (int)((n->h2_next_sweep - now) * 1000) + 1;
  n->h2_next_sweep = now + 0.1;
  double hdr = (double)lim->header_timeout_ms / 1000, req = (double)lim->timeout_ms / 1000;
  for (struct h2_conn *c = n->h2_conns, *next; c; c = next) {
    next = c->next;
    if (c->state == C_SNIFF) {                                   /* conns.c's deadline: a shutdown, seen as an end */
      if (!c->waiting && now - c->accepted > hdr) conn_close(c); /* untracked (no memory) */
      continue;
    }
    /* An answer its client does not read, at the socket: the connection goes. */
    if (c->out_off < c->out_len && now - c->last_io > req) {
      conn_close(c);
      continue;
    }
    /* Draining, or idle past the keep-alive limit: GOAWAY, then closed once its streams end
     * (a second later at most, when the client does not close it itself). */
    if (ld_draining || (!c->live && now - c->last_io > hdr)) {
      if (!c->goaway) c->last_io = now;
      goaway(c);
    }
    if (c->goaway && !c->live && now - c->last_io > 1) {
      conn_close(c);
      continue;
    }
    for (struct ld_h2_stream *st = c->streams; st; st = st->next) {
      if (st->closed || at_work(st)) continue;
      bool slow_in = !st->answered && now - st->started > req;
      bool slow_out = st->answered && now - st->last_progress > req;
      if ((slow_in || slow_out) && !st->reset) {
        st->reset = true;
        count(&stat_stalled, 1);
        nghttp2_submit_rst_stream(c->s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_CANCEL);
      }
    }
    if (!conn_flush(c)) conn_close(c);
  }
  return 100;
}

int ld_h2_start(struct ld_net *n) {
  pthread_once(&setup_once, setup);
  if (!setup_ok) ld_log(LD_LOG_WARN, "HTTP/2: libnghttp2 could not be set up; serving HTTP/1.1 only");
  n->h2_epfd = epoll_create1(EPOLL_CLOEXEC);
  return n->h2_epfd;
}

void ld_h2_stop(struct ld_net *n) {
  while (n->h2_conns) conn_close(n->h2_conns);
}
