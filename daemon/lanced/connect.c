/* Connect protocol, unary: POST /lanced.v1.RowService/{Take,GetFile} with
 * application/proto (binary) or application/json (proto3 JSON) bodies. `path` may name a
 * data file or a dataset directory (`version` pins one of its versions; 0 = the latest). Errors
 * are Connect error bodies {"code":..,"message":..} with the HTTP status the Connect spec assigns. */
#include "lanced.h"
#include "service.h"
#include "metrics.h"
#include "request.h"
#include "routes.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "lanced/v1/lanced.pb-c.h"

/* Connect's codes and their HTTP status (connectrpc.com/docs/protocol#error-codes), in
 * gRPC's numbering: the code at [i] is gRPC status i + 1 (0 is OK; gRPC's doc/statuscodes.md
 * names the same sixteen in this order). */
static const struct {
  const char *code;
  int http;
} connect_codes[] = {
    {"canceled", 499},
    {"unknown", 500},
    {"invalid_argument", 400},
    {"deadline_exceeded", 504},
    {"not_found", 404},
    {"already_exists", 409},
    {"permission_denied", 403},
    {"resource_exhausted", 429},
    {"failed_precondition", 400},
    {"aborted", 409},
    {"out_of_range", 400},
    {"unimplemented", 501},
    {"internal", 500},
    {"unavailable", 503},
    {"data_loss", 500},
    {"unauthenticated", 401}};

static int code_index(const char *code) {
  for (int i = 0; i < (int)(sizeof connect_codes / sizeof connect_codes[0]); i++)
    if (!strcmp(connect_codes[i].code, code)) return i;
  return -1;
}

/* Connect code → HTTP status; unknown: 500, as internal. */
static int connect_status(const char *code) {
  int i = code_index(code);
  return i < 0 ? 500 : connect_codes[i].http;
}

int ld_grpc_code(const char *connect) {
  int i = code_index(connect);
  return i < 0 ? 13 /* internal */ : i + 1;
}

void ld_connect_error(struct ld_response *out, const struct ld_err *e) {
  const char *code = ld_connect_code(e->code); /* errors.c: the one table of codes */
  lnc_buf_free(&out->body);
  out->status = connect_status(code);
  out->content_type = "application/json";
  ld_buf_puts(&out->body, "{\"code\":");
  ld_buf_json_str(&out->body, code, strlen(code));
  ld_buf_puts(&out->body, ",\"message\":");
  ld_buf_json_str(&out->body, e->message, strlen(e->message));
  ld_buf_puts(&out->body, "}");
  /* A retry helps only where the REST answer would be 503 (busy, out of memory): Connect's
   * resource_exhausted (429) also names limits a retry meets again (too many ids, a body or
   * an answer over its limit), and Retry-After there invited clients to loop. */
  if (e->http == 503) out->retry_after = 1;
}

/* Decodes a request message as `d` in the negotiated codec; NULL with e filled on failure. */
static ProtobufCMessage *decode(const uint8_t *p, size_t len, const ProtobufCMessageDescriptor *d,
                                bool json, struct ld_err *e) {
  ProtobufCMessage *m;
  if (json) {
    char msg[400];
    m = ld_pbjson_read(d, len ? (const char *)p : "{}", len ? len : 2, msg, sizeof msg);
    if (!m) ld_errf(e, LD_INVALID, "%s", msg);
  } else {
    m = protobuf_c_message_unpack(d, NULL, len, p);
    const char *nul = m ? ld_pb_nul_string(d, p, len) : NULL;
    if (!m)
      ld_errf(e, LD_INVALID, "body is not a valid %s", d->name);
    else if (nul) {
      protobuf_c_message_free_unpacked(m, NULL);
      m = NULL;
      ld_errf(e, LD_INVALID, "field %s holds a NUL byte", nul);
    }
  }
  return m;
}

static void free_msg(ProtobufCMessage *m, bool json) {
  if (json)
    ld_pbjson_free(m);
  else
    protobuf_c_message_free_unpacked(m, NULL);
}

int ld_rpc_take(struct ld_req *r, const struct ld_rpc *call, struct lnc_buf *body, struct ld_err *e_out) {
  struct ld_err e;
  struct ld_take_result t = {0};
  bool json = call->json;
  Lanced__V1__TakeRequest *q =
      (Lanced__V1__TakeRequest *)decode(call->msg, call->len, &lanced__v1__take_request__descriptor, json, &e);
  if (!q) return *e_out = e, e.http;
  int format = q->format == LANCED__V1__FORMAT__FORMAT_PROTO ? LANCED__V1__FORMAT__FORMAT_PROTO
                                                             : LANCED__V1__FORMAT__FORMAT_ARROW;
  r->format = format == LANCED__V1__FORMAT__FORMAT_PROTO ? LD_F_PROTO : LD_F_ARROW;
  bool by_rowid = q->n_row_ids > 0;
  uint64_t *ids = by_rowid ? q->row_ids : q->ids;
  size_t nids = by_rowid ? q->n_row_ids : q->n_ids;
  if (q->n_ids && q->n_row_ids)
    ld_errf(&e, LD_INVALID, "give ids or row_ids, not both");
  else if (!nids)
    ld_errf(&e, LD_INVALID, "ids is empty");
  else if (ld_pin_tag(&r->call, q->path, q->tag && *q->tag ? q->tag : NULL, &q->version, &e))
    ;
  else if (nids > r->lim.max_ids)
    ld_errf(&e, LD_RATE_LIMITED, "%zu ids is over max_ids_per_request (%llu)", nids,
            (unsigned long long)r->lim.max_ids);
  else if (ld_service_take(&r->call, q->path, q->version ? &q->version : NULL, ids, nids,
                           (const char *const *)q->columns, q->n_columns, LNC_BLOBS_BYTES,
                           by_rowid ? LNC_IDS_ROW_IDS : LNC_IDS_OFFSETS, r->lim.max_response, false, &t.schema, &t.array,
                           &t.stats, &e) == 0) {
    r->rows = nids;
    ld_metrics_rows(nids, &t.stats);
    int rc = ld_proto_take_response(&t, format, json, body, &e);
    t.array.release(&t.array);
    t.schema.release(&t.schema);
    if (!rc && body->len > r->lim.max_response)
      rc = ld_errf(&e, LD_RATE_LIMITED,
                   "the answer is %zu bytes, over max_response_bytes (%llu)", body->len,
                   (unsigned long long)r->lim.max_response);
    if (!rc && call->deadline && lnc_now_s() > call->deadline)
      rc = ld_errf(&e, LD_DEADLINE, "%s elapsed", call->deadline_name);
    if (!rc) {
      free_msg(&q->base, json);
      return 0;
    }
  }
  free_msg(&q->base, json);
  lnc_buf_free(body);
  *e_out = e;
  return e.http;
}

int ld_rpc_get_file(struct ld_req *r, const struct ld_rpc *call, struct lnc_buf *body, struct ld_err *e) {
  struct ld_file_info fi;
  bool json = call->json;
  Lanced__V1__GetFileRequest *q =
      (Lanced__V1__GetFileRequest *)decode(call->msg, call->len, &lanced__v1__get_file_request__descriptor, json, e);
  if (!q) return e->http;
  int rc = ld_pin_tag(&r->call, q->path, q->tag && *q->tag ? q->tag : NULL, &q->version, e);
  if (!rc) rc = ld_service_describe(&r->call, q->path, q->version ? &q->version : NULL, &fi, e);
  if (!rc) {
    rc = ld_proto_file_info(q->path, &fi, json, body, e);
    fi.schema.release(&fi.schema);
    lnc_buf_free(&fi.describe);
  }
  if (!rc && call->deadline && lnc_now_s() > call->deadline) /* a describe may have waited on the device */
    rc = ld_errf(e, LD_DEADLINE, "%s elapsed", call->deadline_name);
  free_msg(&q->base, json);
  if (rc) lnc_buf_free(body);
  return rc;
}

/* gRPC and gRPC-Web clients get an answer in their own shape: a trailers-only response
 * (HTTP 200, grpc-status 12 UNIMPLEMENTED in the headers) naming what is served, instead of a
 * dropped connection or a REST-shaped 415 they cannot read. */
static void grpc_unimplemented(const char *ct, struct ld_response *out) {
  lnc_buf_free(&out->body);
  out->status = 200;
  out->content_type = !strncasecmp(ct, "application/grpc-web", 20) ? "application/grpc-web+proto"
                                                                   : "application/grpc";
  out->grpc_status = "12";
  out->grpc_message = "lanced serves gRPC over HTTP/2 (h2c, prior knowledge) and the Connect protocol "
                      "(unary, application/proto or application/json); gRPC over HTTP/1.1 and gRPC-Web "
                      "are not served";
}

void ld_connect_handle(struct ld_req *r, const char *method, struct ld_response *out) {
  struct ld_err e;
  const char *ct = ld_header(r, "Content-Type");
  size_t ctlen = strcspn(ct, ";");
  bool json;
  if (ctlen == 16 && !strncasecmp(ct, "application/json", 16))
    json = true;
  else if (ctlen == 17 && !strncasecmp(ct, "application/proto", 17))
    json = false;
  else if (!strncasecmp(ct, "application/grpc", 16))
    return grpc_unimplemented(ct, out);
  else {
    /* Not a Connect unary request we speak: 415, as the spec asks. */
    ld_errf(&e, LD_MEDIA_TYPE,
            "Content-Type must be application/proto or application/json");
    ld_connect_error(out, &e); /* the Connect error body, with the status the spec asks */
    out->status = 415;
    out->extra_name = "Accept-Post", out->extra_value = "application/proto, application/json";
    return;
  }
  const char *ver = ld_header_opt(r, "Connect-Protocol-Version");
  if (ver && strcmp(ver, "1")) {
    ld_errf(&e, LD_INVALID, "Connect-Protocol-Version must be 1");
    return ld_connect_error(out, &e);
  }
  double deadline = 0;
  const char *tm = ld_header_opt(r, "Connect-Timeout-Ms");
  uint64_t ms = 0;
  if (tm) {
    if (!lnc_parse_u64(tm, strlen(tm), &ms) || strlen(tm) > 10) {
      ld_errf(&e, LD_INVALID, "Connect-Timeout-Ms must be a positive integer");
      return ld_connect_error(out, &e);
    }
    deadline = r->start + (double)ms / 1000.0;
  }
  /* Another Content-Encoding is `unimplemented` (the Connect spec's code for it). */
  if (ld_body_decode(r, LD_UNIMPLEMENTED, &e)) {
    ld_connect_error(out, &e);
    out->extra_name = "Accept-Encoding", out->extra_value = "gzip, identity";
    return;
  }
  /* Spent before the call begins (a slow body, a wait for room): the client has given up, so
   * the work is not done. The deadline counts from the request's headers, as the client's
   * counts from its send. */
  if (deadline && lnc_now_s() > deadline) {
    ld_errf(&e, LD_DEADLINE, "Connect-Timeout-Ms (%llu ms) elapsed before the call began",
            (unsigned long long)ms);
    return ld_connect_error(out, &e);
  }
  struct ld_rpc call = {r->body.data, r->body.len, json, deadline, "Connect-Timeout-Ms"};
  int rc;
  if (!strcmp(method, "Take"))
    rc = ld_rpc_take(r, &call, &out->body, &e);
  else if (!strcmp(method, "GetFile"))
    rc = ld_rpc_get_file(r, &call, &out->body, &e);
  else
    rc = ld_errf(&e, LD_UNIMPLEMENTED, "lanced.v1.RowService has no method %.100s", method);
  if (rc) return ld_connect_error(out, &e);
  out->status = 200;
  if (out->status == 200) {
    out->content_type = json ? "application/json" : "application/proto";
    if (ld_gzip_wanted(ld_header(r, "Accept-Encoding"), out->body.len) && ld_gzip(&out->body) == 0)
      out->content_encoding = "gzip";
  }
}
