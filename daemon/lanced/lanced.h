/* lanced internals, the base every module includes: version, logging, the error kinds, byte
 * buffers and the clock. The rest is split by concern, each module including what it uses:
 * config.h (settings and limits), service.h (the one caller of liblance), server.h (network
 * threads, connections, accept, take threads), request.h (a request's record), routes.h
 * (routes and protocols), metrics.h. Every non-static symbol is ld_-prefixed; each section
 * names the file that implements it. */
#ifndef LANCED_H
#define LANCED_H
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lance.h"
#include "util/assert.h"
#include "util/clock.h"
#include "util/parse.h"
#include "util/version.h"

#define LD_VERSION "0.1.0"

/* ---- log.c: one line per event on stderr ---------------------------------------------- */
enum { LD_LOG_ERROR,
       LD_LOG_WARN,
       LD_LOG_INFO,
       LD_LOG_DEBUG };
extern int ld_log_level; /* read racily by design: a stale level for one line is harmless */
void ld_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int ld_log_level_parse(const char *s); /* -1 when unknown */
const char *ld_log_level_name(int level);


/* ---- errors shared by every route --------------------------------------------------------- */
struct ld_err {
  int http;         /* HTTP status for the REST routes */
  const char *code; /* stable code string: "invalid_argument", "not_found", ... */
  char message[600];
};
/* What went wrong, by name; errors.c's table gives each its code string, HTTP status and
 * Connect code, so no call site spells a status or a code. */
enum ld_kind {
  LD_INVALID,           /* 400 invalid_argument */
  LD_OUT_OF_RANGE,      /* 400 out_of_range */
  LD_NOT_FOUND,         /* 404 not_found */
  LD_CORRUPT,           /* 422 corrupt_file */
  LD_UNSUPPORTED,       /* 422 unsupported */
  LD_TOO_LARGE,         /* 413 limit_exceeded */
  LD_EXHAUSTED,         /* 503 resource_exhausted: busy or out of memory, retry */
  LD_IO,                /* 503 io_error */
  LD_INTERNAL,          /* 500 internal */
  LD_FORBIDDEN,         /* 403 permission_denied */
  LD_UNAVAILABLE,       /* 503 unavailable */
  LD_DEADLINE,          /* 504 deadline_exceeded */
  LD_UNIMPLEMENTED,     /* 501 unimplemented */
  LD_METHOD,            /* 405 method_not_allowed */
  LD_RATE_LIMITED,      /* 429 resource_exhausted (Connect: a limit the request is over) */
  LD_MEDIA_TYPE,        /* 415 unsupported_media_type */
  LD_HEADERS_TOO_LARGE, /* 431 limit_exceeded (a request's headers over their bound) */
  LD_URI_TOO_LONG,      /* 414 limit_exceeded (an HTTP/1.1 request line over its buffer) */
  LD_HTTP_VERSION,      /* 505 unimplemented (an HTTP version not served) */
  LD_KIND_COUNT
};
/* Fills e; returns its HTTP status. */
int ld_errf(struct ld_err *e, enum ld_kind kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Maps a liblance error onto an HTTP status and code (errors.c, the one table of codes). */
int ld_err_from_lnc(struct ld_err *e, const struct lnc_error *le);
/* The Connect code for one of our codes ("corrupt_file" -> "data_loss"; unknown -> internal). */
const char *ld_connect_code(const char *name);
/* gRPC's numeric status for a Connect code ("not_found" -> 5; unknown -> 13, internal), from
 * connect.c's table of Connect codes. */
int ld_grpc_code(const char *connect);


/* ---- util.c: byte buffers (struct lnc_buf from lance.h); the clock is util/clock.h -------------------- */
/* Appends abort on allocation failure: a daemon out of memory for a few KiB of headers or
 * JSON cannot answer anything useful anyway, and it keeps every call site one line. */
void ld_buf_append(struct lnc_buf *b, const void *p, size_t n);
void ld_buf_puts(struct lnc_buf *b, const char *s);
void ld_buf_printf(struct lnc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ld_buf_json_str(struct lnc_buf *b, const char *s, size_t n); /* quoted, escaped */

#endif
