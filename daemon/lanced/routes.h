/* Routes and protocols: URL and method to handler (routes.c), the rows and file routes
 * (rows.c, files.c), the listing (listing.c), Connect (connect.c), protobuf answers and
 * proto3 JSON (protocols.c, pbjson.c), gzip (compress.c). */
#ifndef LANCED_ROUTES_H
#define LANCED_ROUTES_H
#include "lanced.h"
#include "request.h"
#include "service.h"

/* ---- listing.c: GET /files/ and /files/<dir>/ --------------------------------------------- */
struct ld_req;
struct ld_response;
void ld_listing_set_root(int rootfd);
size_t ld_listing_count_served(int rootfd); /* datasets and *.lance files in the root or one level down (0 or 1+) */
void ld_listing_handle(struct ld_req *r, const char *rel, struct ld_response *out);


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
 * keeps it. 0, or -1 with e filled: not gzip, over the limit, or another coding, refused as
 * `other` (the kind the caller's protocol answers it with). */
int ld_body_decode(struct ld_req *r, enum ld_kind other, struct ld_err *e);
int ld_gzip(struct lnc_buf *body); /* in place; -1 (body untouched) on failure */

/* lanced.v1.RowService's methods: POST LD_ROWSERVICE_PREFIX <method>, over Connect or gRPC. */
#define LD_ROWSERVICE_PREFIX "/lanced.v1.RowService/"
void ld_route(struct ld_req *r, struct ld_response *out);
void ld_json_error(struct ld_response *out, const struct ld_err *e);
/* The Connect protocol's error body ({"code","message"}) and its HTTP status. */
void ld_connect_error(struct ld_response *out, const struct ld_err *e);
/* e in the shape r's route speaks: Connect's on /lanced.v1.RowService/, else the REST one. */
void ld_error_for(const struct ld_req *r, struct ld_response *out, const struct ld_err *e);
void ld_rows_handle(struct ld_req *r, const char *rel, struct ld_response *out);
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
void ld_file_handle(struct ld_req *r, const char *rel, struct ld_response *out);
/* ?version=N, ?version=<tag> or ?tag=<tag> of dataset rel (files.c): 0 and *out = the version
 * when given, 1 when absent, -1 with e filled when bad. */
int ld_version_arg(struct ld_req *r, const char *rel, uint64_t *out, struct ld_err *e);
/* A request body's tag (NULL: none; protobuf's unset "" is passed as NULL) resolved into
 * *version, which the body may not also give (nonzero): 0, or -1 with e filled. */
int ld_pin_tag(struct ld_call *call, const char *rel, const char *tag, uint64_t *version, struct ld_err *e);
void ld_connect_handle(struct ld_req *r, const char *method, struct ld_response *out);
/* One call of lanced.v1.RowService, whichever protocol carried it (Connect here, gRPC in
 * grpc.c): its request message (binary, or proto3 JSON), the deadline (0 = none) and the
 * header that set it (for the message). 0 with the answer's message appended to body, or the
 * HTTP status with e filled (body left empty). */
struct ld_rpc {
  const uint8_t *msg;
  size_t len;
  bool json;
  double deadline;
  const char *deadline_name;
};
int ld_rpc_take(struct ld_req *r, const struct ld_rpc *call, struct lnc_buf *body, struct ld_err *e);
int ld_rpc_get_file(struct ld_req *r, const struct ld_rpc *call, struct lnc_buf *body, struct ld_err *e);


/* ---- grpc.c: gRPC over HTTP/2 (h2.c) ------------------------------------------------------- */
/* POST /lanced.v1.RowService/{Take,GetFile} and /grpc.health.v1.Health/Check with content-type
 * application/grpc: one length-prefixed message each way, gzip by grpc-encoding, deadline by
 * grpc-timeout; the status in r->out's grpc_status (trailers), the message as its body. */
void ld_grpc_handle(struct ld_req *r, struct ld_response *out);
void ld_grpc_error(struct ld_response *out, const struct ld_err *e); /* a Trailers-Only answer */
bool ld_grpc_is_health(const char *url);
/* The parsers, on their own (tests/fuzz/fuzz_grpc.c). grpc-timeout: at most 8 digits and a
 * unit (H, M, S, m, u, n): 0 and *secs, or -1. A request body as one length-prefixed message:
 * 0 with the message's place, length and compressed flag, or the HTTP status with e filled. */
int ld_grpc_parse_timeout(const char *v, double *secs);
int ld_grpc_unframe(const uint8_t *p, size_t len, const uint8_t **msg, size_t *msg_len, bool *compressed,
                    struct ld_err *e);


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
/* The binary FORMAT_PROTO TakeResponse with its large fields (binaries, tensors) left where
 * they lie and named by *refs (NULL when none was large enough), as ld_service_encode_refs
 * does for Arrow: with *refs set, t->array and t->schema have moved into it (release NULL).
 * The bytes are ld_proto_take_response's. */
struct ld_refs;
int ld_proto_take_response_refs(struct ld_take_result *t, struct lnc_buf *out, struct ld_refs **refs,
                                struct ld_err *e);
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

#endif
