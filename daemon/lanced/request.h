/* A request's record, shared by the server (which makes it, runs it and frees it) and the
 * routes (which answer it): what it asked, where it is, and its answer. */
#ifndef LANCED_REQUEST_H
#define LANCED_REQUEST_H
#include "lanced.h"
#include "config.h"
#include "service.h"

struct ld_h1_conn;
struct ld_net;
struct ld_h2_stream;
/* A request being served; owned by server.c, freed when its connection or stream is done
 * with it (ld_req_finish). */
struct ld_response { /* what a handler produces; h1.c or h2.c frames it */
  int status;
  const char *content_type;
  struct lnc_buf body;  /* ownership passes to the response */
  struct ld_refs *refs; /* an Arrow answer's large buffers, left in the take's array: the answer
                           is body with each ref inserted (ld_response_len), owned here */
  const char *allow;    /* Allow header for 405 */
  int retry_after;      /* seconds; 0 = none */
  bool close;           /* Connection: close after it */
  const char *extra_name, *extra_value;
  const char *content_encoding;           /* "gzip" when body is compressed */
  const char *grpc_status, *grpc_message; /* gRPC: the status (trailers), its message */
  char grpc_text[600];                    /* where grpc_message may point (ld_grpc_error) */
  int grpc_http;                          /* a gRPC error's REST status (the request log and metrics; HTTP says 200) */
};


/* The answer's length: its body and its refs. */
size_t ld_response_len(const struct ld_response *out);
/* Of that, what the daemon's memory holds: all but the refs' runs of files' mappings, which
 * are the page cache's (what max_unsent_bytes, a budget of the daemon's memory, counts). */
size_t ld_response_held(const struct ld_response *out);
/* The refs copied into the body (for a framing that sends one buffer: HTTP/2), file runs
 * read in; -1 out of memory or a file run unreadable, out unchanged. */
int ld_response_flatten(struct ld_response *out);
/* The body and the refs freed (an answer replaced, or done with). */
void ld_response_drop(struct ld_response *out);

/* Where a request is (server.c / dispatch.c). */
enum ld_stage {
  LD_STAGE_NEW = 0,     /* on its network thread */
  LD_STAGE_TASK,        /* a loop task parked on device reads, connection suspended */
  LD_STAGE_TAKE_THREAD, /* handed to a take thread, connection suspended */
  LD_STAGE_ANSWERED,    /* the take thread produced r->out; the connection resumes */
  LD_STAGE_SENT         /* r->out framed on its connection or stream */
};
struct ld_req {
  int route, format, status;
  int stage;               /* enum ld_stage; handed between threads by ld_req_resume */
  struct ld_h1_conn *h1;   /* HTTP/1.1: the connection that carried it (h1.c); NULL over HTTP/2 */
  struct ld_h2_stream *h2; /* HTTP/2: the stream that carried it (h2.c); NULL over HTTP/1.1 */
  struct ld_net *net;      /* the network thread that owns conn or h2 */
  struct ld_response out;  /* the take thread's answer, sent when the connection resumes */
  struct ld_req *next;     /* take queue link */
  double start;
  double route_s; /* how long ld_route ran on the thread that answered it (0: not measured) */
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
  bool grpc;           /* over HTTP/2 with content-type application/grpc: grpc.c answers it */
  struct ld_call call; /* how this attempt calls the service (set before each ld_route) */
  uint64_t rows;
  uint64_t id;                /* this process's count of requests, for the request log */
  size_t bytes_in, bytes_out; /* body bytes received and answered (the request log) */
  size_t unsent;              /* bytes of its queued answer counted under max_unsent_bytes */
  struct ld_limits lim;
};

/* A request's headers and query, whichever protocol carried it (server.c): the connection's
 * parsed head over HTTP/1.1 (h1.c), the stream's own lists over HTTP/2 (h2.c). Names of headers are
 * case-insensitive, of query parameters exact; values are percent-decoded. */
const char *ld_header(const struct ld_req *r, const char *name);     /* "" when absent */
const char *ld_header_opt(const struct ld_req *r, const char *name); /* NULL when absent */
const char *ld_arg(const struct ld_req *r, const char *name);        /* NULL when absent */
/* A query parameter named twice (?ids=1&ids=2), or NULL: such a query is refused, since a
 * server hands out the first and a proxy or cache in front may act on the last. Or
 * ld_query_too_many (server.h): more parameters than are kept, refused too. */
const char *ld_arg_twice(const struct ld_req *r);

#endif
