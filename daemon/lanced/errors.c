/* The one table of lanced's error codes: the code string clients see in REST error bodies,
 * the HTTP status the REST routes answer with, and the Connect code the Connect routes
 * answer with (whose own HTTP status follows the Connect spec, connect.c). Codes that come
 * from liblance are its lnc_code_name() strings, so a liblance error maps through its name. */
#include "lanced.h"
#include "util/assert.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct ld_code {
  const char *name;    /* REST "code" */
  int http;            /* REST status */
  const char *connect; /* Connect code */
};

/* Indexed by enum ld_kind: a call site names the kind, never a status or a code. */
static const struct ld_code codes[LD_KIND_COUNT] = {
    /* from liblance (lnc_code_name) */
    [LD_INVALID] = {"invalid_argument", 400, "invalid_argument"},
    [LD_OUT_OF_RANGE] = {"out_of_range", 400, "out_of_range"},
    [LD_NOT_FOUND] = {"not_found", 404, "not_found"},
    [LD_CORRUPT] = {"corrupt_file", 422, "data_loss"},
    [LD_UNSUPPORTED] = {"unsupported", 422, "failed_precondition"},
    [LD_TOO_LARGE] = {"limit_exceeded", 413, "resource_exhausted"},
    [LD_EXHAUSTED] = {"resource_exhausted", 503, "resource_exhausted"},
    [LD_IO] = {"io_error", 503, "unavailable"}, /* the disk, not the request: retry */
    [LD_INTERNAL] = {"internal", 500, "internal"},
    [LD_FORBIDDEN] = {"permission_denied", 403, "permission_denied"},
    /* the daemon's own */
    [LD_UNAVAILABLE] = {"unavailable", 503, "unavailable"},
    [LD_DEADLINE] = {"deadline_exceeded", 504, "deadline_exceeded"},
    [LD_UNIMPLEMENTED] = {"unimplemented", 501, "unimplemented"},
    [LD_METHOD] = {"method_not_allowed", 405, "unimplemented"},
    /* Connect's over-limit answers (too many ids): 429, which Connect clients back off on. */
    [LD_RATE_LIMITED] = {"resource_exhausted", 429, "resource_exhausted"},
    /* A Content-Type or Content-Encoding the route does not speak (RFC 9110 15.5.16). */
    [LD_MEDIA_TYPE] = {"unsupported_media_type", 415, "invalid_argument"},
    /* A request's headers over their bound: an HTTP/2 header list, HTTP/1.1's buffer. */
    [LD_HEADERS_TOO_LARGE] = {"limit_exceeded", 431, "resource_exhausted"},
    [LD_URI_TOO_LONG] = {"limit_exceeded", 414, "resource_exhausted"},
    [LD_HTTP_VERSION] = {"unimplemented", 505, "unimplemented"},
};

int ld_errf(struct ld_err *e, enum ld_kind kind, const char *fmt, ...) {
  LNC_ASSERT(kind >= 0 && kind < LD_KIND_COUNT && codes[kind].name);
  e->http = codes[kind].http;
  e->code = codes[kind].name;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->message, sizeof e->message, fmt, ap);
  va_end(ap);
  return e->http;
}

/* The first row named name (the rows of one name share their Connect code), or NULL. */
static const struct ld_code *find(const char *name) {
  for (size_t i = 0; i < LD_KIND_COUNT; i++)
    if (!strcmp(codes[i].name, name)) return &codes[i];
  return NULL;
}

static enum ld_kind kind_of(const struct ld_code *c) { return (enum ld_kind)(c - codes); }

int ld_err_from_lnc(struct ld_err *e, const struct lnc_error *le) {
  /* LNC_EAGAIN ("would_block") never reaches a client: the request is retried where it may
   * wait; if it did, it is a bug, hence internal. */
  const struct ld_code *c = le->code == LNC_EAGAIN ? NULL : find(lnc_code_name(le->code));
  if (!c) c = &codes[LD_INTERNAL];
  return ld_errf(e, kind_of(c), "%s", le->message[0] ? le->message : c->name);
}

const char *ld_connect_code(const char *name) {
  const struct ld_code *c = find(name);
  return c ? c->connect : "internal";
}
