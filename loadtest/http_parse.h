/* Incremental HTTP/1.1 response parser: fed whatever read() returned (any split, several
 * pipelined responses in one buffer), it tracks status line, headers, Content-Length,
 * chunked or read-until-close bodies and keep-alive, copying nothing unless asked to. */
#ifndef LD_HTTP_PARSE_H
#define LD_HTTP_PARSE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LD_HTTP_LINE_MAX 8192 /* longest status/header/chunk-size line accepted */

typedef enum { LD_HTTP_MORE = 0,
               LD_HTTP_DONE = 1,
               LD_HTTP_ERROR = -1 } ld_http_result;

typedef struct ld_http_resp {
  int state;
  int status; /* e.g. 200 */
  int minor;  /* HTTP/1.<minor> */
  bool chunked;
  bool close;             /* server will close after this response (or HTTP/1.0 w/o keep-alive) */
  bool keep_alive_hdr;    /* "Connection: keep-alive" seen (matters for HTTP/1.0) */
  bool no_body;           /* 1xx/204/304 or a response to HEAD */
  bool head_request;      /* the request was HEAD: no body whatever the headers say */
  int64_t content_length; /* -1 when absent */
  uint64_t remaining;     /* bytes left in the Content-Length body or current chunk */
  uint64_t header_bytes, body_bytes;
  char content_type[64];
  /* Optional capture of the body (decoded, without chunk framing). */
  bool capture;
  char *body;
  size_t body_len, body_cap;
  size_t line_len;
  char line[LD_HTTP_LINE_MAX];
  char error[96];
} ld_http_resp;

/* Prepares for the next response on a connection. Keeps the capture buffer allocated. */
void ld_http_resp_reset(ld_http_resp *p, bool head_request, bool capture);
void ld_http_resp_free(ld_http_resp *p);
/* Consumes bytes from data. Returns LD_HTTP_DONE once a full response was parsed (with
 * *used = bytes belonging to it, the rest starts the next response), LD_HTTP_MORE when all
 * of data was consumed, LD_HTTP_ERROR with p->error set on malformed input. */
ld_http_result ld_http_resp_feed(ld_http_resp *p, const char *data, size_t len, size_t *used);
/* The peer closed the connection. DONE when that legitimately ends the response (body
 * delimited by close), else ERROR (short body / truncated headers). */
ld_http_result ld_http_resp_eof(ld_http_resp *p);
/* True when nothing of the response has been received yet (to tell a dropped keep-alive
 * connection from a truncated answer). */
bool ld_http_resp_untouched(const ld_http_resp *p);
/* True once the status line and headers are complete. */
bool ld_http_resp_headers_done(const ld_http_resp *p);

#endif
