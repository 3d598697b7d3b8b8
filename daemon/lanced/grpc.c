/* gRPC over HTTP/2 (PROTOCOL-HTTP2 of gRPC): lanced.v1.RowService's Take and GetFile, and
 * grpc.health.v1.Health's Check, unary. h2.c frames the stream; this reads the one
 * length-prefixed request message and builds the answer: the length-prefixed response message
 * as the body with grpc-status 0 in the trailers, or no body and the status in the headers
 * (Trailers-Only) on error. The service calls are Connect's (connect.c ld_rpc_*), so a row is
 * the same row whichever protocol asked for it. */
#include "lanced.h"
#include "metrics.h"
#include "request.h"
#include "routes.h"
#include "server.h"
#include "service.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "grpc/health/v1/health.pb-c.h"

#define HEALTH_CHECK "/grpc.health.v1.Health/Check"
/* The length-prefixed message: a compressed flag byte, then the length (big-endian u32). */
#define GRPC_PREFIX 5

/* grpc-status as text, by number (0 OK .. 16 UNAUTHENTICATED). */
static const char *const status_text[] = {"0", "1", "2", "3", "4", "5", "6", "7", "8",
                                          "9", "10", "11", "12", "13", "14", "15", "16"};

bool ld_grpc_is_health(const char *url) { return url && !strcmp(url, HEALTH_CHECK); }

void ld_grpc_error(struct ld_response *out, const struct ld_err *e) {
  lnc_buf_free(&out->body);
  out->status = 200; /* gRPC carries its errors in grpc-status, over HTTP 200 */
  out->content_type = "application/grpc";
  out->content_encoding = NULL;
  out->grpc_status = status_text[ld_grpc_code(ld_connect_code(e->code))];
  snprintf(out->grpc_text, sizeof out->grpc_text, "%s", e->message);
  out->grpc_message = out->grpc_text;
  out->grpc_http = e->http;
  /* A 503's retry hint has no place in gRPC: UNAVAILABLE itself tells clients to retry. */
  out->retry_after = 0;
}

int ld_grpc_parse_timeout(const char *v, double *secs) {
  size_t n = strlen(v);
  if (n < 2 || n > 9) return -1;
  double x = 0;
  for (size_t i = 0; i + 1 < n; i++) {
    if (v[i] < '0' || v[i] > '9') return -1;
    x = x * 10 + (v[i] - '0');
  }
  switch (v[n - 1]) {
  case 'H': *secs = x * 3600; return 0;
  case 'M': *secs = x * 60; return 0;
  case 'S': *secs = x; return 0;
  case 'm': *secs = x / 1e3; return 0;
  case 'u': *secs = x / 1e6; return 0;
  case 'n': *secs = x / 1e9; return 0;
  default: return -1;
  }
}

/* The request's one message (inflated when its flag says so) into *msg / *len, pointing into
 * r->body or into plain; 0, or the HTTP status with e filled. */
int ld_grpc_unframe(const uint8_t *p, size_t len, const uint8_t **msg, size_t *msg_len, bool *compressed,
                    struct ld_err *e) {
  if (len < GRPC_PREFIX)
    return ld_errf(e, LD_INVALID, "the request holds no gRPC message (%zu bytes; a message is a 5-byte "
                                  "prefix and its bytes)",
                   len);
  uint64_t n = (uint64_t)p[1] << 24 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 8 | p[4];
  if (n != len - GRPC_PREFIX)
    return ld_errf(e, LD_INVALID, "the request's gRPC message says %llu bytes but %zu follow (one message per call)",
                   (unsigned long long)n, len - GRPC_PREFIX);
  if (p[0] > 1) return ld_errf(e, LD_INVALID, "gRPC message flag %u is neither 0 nor 1", p[0]);
  *msg = p + GRPC_PREFIX, *msg_len = (size_t)n, *compressed = p[0] == 1;
  return 0;
}

static int request_message(struct ld_req *r, struct lnc_buf *plain, const uint8_t **msg, size_t *len,
                           struct ld_err *e) {
  bool compressed;
  if (ld_grpc_unframe(r->body.data, r->body.len, msg, len, &compressed, e)) return e->http;
  if (!compressed) return 0;
  const char *enc = ld_header(r, "grpc-encoding");
  if (strcasecmp(enc, "gzip"))
    return ld_errf(e, LD_UNIMPLEMENTED, "compressed message with grpc-encoding '%.40s' (gzip is served)", enc);
  struct lnc_buf z = {(uint8_t *)*msg, *len, *len};
  if (ld_gunzip(&z, r->lim.max_body, plain, e)) return e->http;
  *msg = plain->data, *len = plain->len;
  return 0;
}

/* Health/Check from the same state as /healthz: SERVING, or NOT_SERVING while draining. */
static int health_check(const uint8_t *msg, size_t len, struct lnc_buf *body, struct ld_err *e) {
  Grpc__Health__V1__HealthCheckRequest *q = grpc__health__v1__health_check_request__unpack(NULL, len, msg);
  if (!q) return ld_errf(e, LD_INVALID, "body is not a valid grpc.health.v1.HealthCheckRequest");
  bool known = !q->service[0] || !strcmp(q->service, "lanced.v1.RowService");
  int rc = known ? 0 : ld_errf(e, LD_NOT_FOUND, "no service '%.100s' here (lanced.v1.RowService, or '' for the server)", q->service);
  grpc__health__v1__health_check_request__free_unpacked(q, NULL);
  if (rc) return rc;
  Grpc__Health__V1__HealthCheckResponse a = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__INIT;
  a.status = ld_draining ? GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING
                         : GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING;
  size_t n = grpc__health__v1__health_check_response__get_packed_size(&a);
  uint8_t tmp[16];
  if (n > sizeof tmp) return ld_errf(e, LD_INTERNAL, "health answer of %zu bytes", n);
  grpc__health__v1__health_check_response__pack(&a, tmp);
  ld_buf_append(body, tmp, n);
  return 0;
}

/* The call, by path: 0 with its message in body, or the HTTP status with e filled. */
static int call(struct ld_req *r, const struct ld_rpc *c, struct lnc_buf *body, struct ld_err *e) {
  if (ld_grpc_is_health(r->url)) {
    r->route = LD_R_HEALTHZ;
    return health_check(c->msg, c->len, body, e);
  }
  const char *m = !strncmp(r->url, LD_ROWSERVICE_PREFIX, strlen(LD_ROWSERVICE_PREFIX)) ? r->url + strlen(LD_ROWSERVICE_PREFIX) : NULL;
  if (m && !strcmp(m, "Take")) {
    r->route = LD_R_TAKE;
    return ld_rpc_take(r, c, body, e);
  }
  if (m && !strcmp(m, "GetFile")) {
    r->route = LD_R_GETFILE;
    return ld_rpc_get_file(r, c, body, e);
  }
  return ld_errf(e, LD_UNIMPLEMENTED, "no method %.200s (lanced.v1.RowService/Take, /GetFile; "
                                      "grpc.health.v1.Health/Check)",
                 r->url);
}

/* The answer's message (after the prefix's room in out->body) framed. Compressed with gzip as the request was (grpc-go's default: a
 * client that sends gzip reads it), when the client accepts it and it is worth it; clients
 * list gzip in grpc-accept-encoding by default, and compressing every answer then would
 * spend the server's CPU on what a sidecar on the same host does not need. */
static void frame(struct ld_req *r, struct ld_response *out) {
  struct lnc_buf *b = &out->body;
  size_t len = b->len - GRPC_PREFIX;
  bool z = false;
  if (!strcasecmp(ld_header(r, "grpc-encoding"), "gzip") && ld_gzip_wanted(ld_header(r, "grpc-accept-encoding"), len)) {
    struct lnc_buf msg = {0};
    ld_buf_append(&msg, b->data + GRPC_PREFIX, len);
    if ((z = ld_gzip(&msg) == 0)) {
      b->len = GRPC_PREFIX;
      ld_buf_append(b, msg.data, msg.len);
      len = msg.len;
      out->content_encoding = "gzip";
    }
    lnc_buf_free(&msg);
  }
  uint8_t pre[GRPC_PREFIX] = {z ? 1 : 0, (uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len};
  memcpy(b->data, pre, sizeof pre);
}

void ld_grpc_handle(struct ld_req *r, struct ld_response *out) {
  struct ld_err e;
  struct lnc_buf plain = {0};
  double deadline = 0, secs;
  const char *tm = ld_header_opt(r, "grpc-timeout");
  const uint8_t *m = NULL;
  size_t len = 0;
  r->format = LD_F_PROTO;
  int rc = 0;
  if (strcmp(r->method, "POST"))
    rc = ld_errf(&e, LD_METHOD, "gRPC calls are POSTs, not %s", r->method);
  else if (tm && ld_grpc_parse_timeout(tm, &secs))
    rc = ld_errf(&e, LD_INVALID, "grpc-timeout '%.20s' is not 1-8 digits and a unit (H M S m u n)", tm);
  else if (tm && (deadline = r->start + secs) && lnc_now_s() > deadline)
    rc = ld_errf(&e, LD_DEADLINE, "grpc-timeout (%s) elapsed before the call began", tm);
  else
    rc = request_message(r, &plain, &m, &len, &e);
  lnc_buf_free(&out->body);
  if (!rc) { /* the message is built after the room for its prefix: no copy of it */
    static const uint8_t room[GRPC_PREFIX];
    ld_buf_append(&out->body, room, sizeof room);
    struct ld_rpc c = {m, len, false, deadline, "grpc-timeout"};
    rc = call(r, &c, &out->body, &e);
  }
  lnc_buf_free(&plain);
  if (rc) return ld_grpc_error(out, &e);
  frame(r, out);
  out->status = 200;
  out->content_type = "application/grpc";
  out->grpc_status = status_text[0];
  out->grpc_message = NULL;
}
