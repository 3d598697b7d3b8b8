/* Builds the HTTP/1.1 request bytes for one batch of row ids: GET with ?ids= for short
 * lists, POST with a JSON body past the threshold (URLs over ~2 KB are refused by many
 * servers and proxies). The constant parts are rendered once, per run. */
#ifndef LD_REQUEST_H
#define LD_REQUEST_H
#include "sbuf.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LD_AUTO_URL_LIMIT 2048 /* request-target length above which POST is used */

typedef struct ld_req_tmpl {
  ld_sbuf get_head;      /* "GET /files/<p>/rows?ids=" */
  ld_sbuf get_tail;      /* "&columns=..&format=.. HTTP/1.1\r\nHost: ..\r\n\r\n" */
  ld_sbuf post_head;     /* "POST ... HTTP/1.1\r\n...Content-Length: " */
  ld_sbuf post_cols;     /* ',"columns":[..]}' or '}' */
  size_t target_fixed;   /* request-target length of a GET without the ids */
  size_t post_threshold; /* 0: automatic (URL length) */
  ld_sbuf raw;           /* complete GET for --raw-path mode */
} ld_req_tmpl;

typedef struct ld_req_params {
  const char *host_header; /* Host: value, e.g. 127.0.0.1:8080 */
  const char *prefix;      /* path prefix from the URL ("" or "/api") */
  const char *file;        /* --path, relative to the server's root */
  const char *columns;     /* NULL or "a,b" */
  const char *format;      /* NULL or json|arrow|proto */
  size_t post_threshold;   /* 0 = automatic */
  const char *raw_path;    /* NULL unless --raw-path */
} ld_req_params;

void ld_req_tmpl_init(ld_req_tmpl *t, const ld_req_params *p);
void ld_req_tmpl_free(ld_req_tmpl *t);
/* Replaces out with the request for ids; *is_post says which form was chosen. */
void ld_req_build(const ld_req_tmpl *t, const uint64_t *ids, size_t n, ld_sbuf *out, bool *is_post);
/* Appends s percent-encoded; bytes in keep (besides unreserved ones) are left as they are. */
void ld_percent_encode(ld_sbuf *out, const char *s, const char *keep);
/* Appends "1,5,9". */
void ld_ids_join(ld_sbuf *out, const uint64_t *ids, size_t n);

#endif
