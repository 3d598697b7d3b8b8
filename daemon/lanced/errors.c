/* The one table of lanced's error codes: the code string clients see in REST error bodies,
 * the HTTP status the REST routes answer with, and the Connect code the Connect routes
 * answer with (whose own HTTP status follows the Connect spec, connect.c). Codes that come
 * from liblance are its lnc_code_name() strings, so a liblance error maps through its name. */
#include "lanced.h"
#include <string.h>

struct ld_code {
  const char *name;    /* REST "code" */
  int http;            /* REST status (a call site may choose another, e.g. 429 vs 503) */
  const char *connect; /* Connect code */
};

static const struct ld_code codes[] = {
    /* from liblance (lnc_code_name) */
    {"invalid_argument", 400, "invalid_argument"},
    {"out_of_range", 400, "out_of_range"},
    {"not_found", 404, "not_found"},
    {"corrupt_file", 422, "data_loss"},
    {"unsupported", 422, "failed_precondition"},
    {"limit_exceeded", 413, "resource_exhausted"},
    {"resource_exhausted", 503, "resource_exhausted"},
    {"io_error", 503, "unavailable"}, /* the disk, not the request: retry */
    {"internal", 500, "internal"},
    {"permission_denied", 403, "permission_denied"},
    /* the daemon's own */
    {"unavailable", 503, "unavailable"},
    {"deadline_exceeded", 504, "deadline_exceeded"},
    {"unimplemented", 501, "unimplemented"},
    {"method_not_allowed", 405, "unimplemented"},
};

static const struct ld_code *find(const char *name) {
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
    if (!strcmp(codes[i].name, name)) return &codes[i];
  return NULL;
}

int ld_err_from_lnc(struct ld_err *e, const struct lnc_error *le) {
  /* LNC_EAGAIN ("would_block") never reaches a client: the request is retried where it may
   * wait; if it did, it is a bug, hence internal. */
  const struct ld_code *c = le->code == LNC_EAGAIN ? NULL : find(lnc_code_name(le->code));
  if (!c) c = find("internal");
  return ld_errf(e, c->http, c->name, "%s", le->message[0] ? le->message : c->name);
}

const char *ld_connect_code(const char *name) {
  const struct ld_code *c = find(name);
  return c ? c->connect : "internal";
}
