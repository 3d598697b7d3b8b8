/* Routing: URL and method → handler, plus the small routes (/healthz, /metrics) and the
 * error vocabulary every REST route shares: {"error":{"code":..,"message":..}}. */
#include "lanced.h"
#include "metrics.h"
#include "request.h"
#include "server.h"
#include "routes.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void ld_json_error(struct ld_response *out, const struct ld_err *e) {
  out->status = e->http;
  out->content_type = "application/json";
  ld_response_drop(out);
  ld_buf_puts(&out->body, "{\"error\":{\"code\":");
  ld_buf_json_str(&out->body, e->code, strlen(e->code));
  ld_buf_puts(&out->body, ",\"message\":");
  ld_buf_json_str(&out->body, e->message, strlen(e->message));
  ld_buf_puts(&out->body, "}}\n");
  if (e->http == 503) out->retry_after = 1;
}


void ld_error_for(const struct ld_req *r, struct ld_response *out, const struct ld_err *e) {
  if (r && r->grpc)
    ld_grpc_error(out, e);
  else if (r && r->url && !strncmp(r->url, LD_ROWSERVICE_PREFIX, strlen(LD_ROWSERVICE_PREFIX)))
    ld_connect_error(out, e);
  else
    ld_json_error(out, e);
}

static bool is(const char *m, const char *want) { return strcmp(m, want) == 0; }

static void method_not_allowed(struct ld_req *r, const char *allow, struct ld_response *out) {
  struct ld_err e;
  ld_errf(&e, LD_METHOD, "%s is not allowed here; use %s", r->method, allow);
  ld_json_error(out, &e);
  out->allow = allow;
}

/* rest (after "/files/") without its last `drop` bytes, NUL-terminated, into rel[cap]; false
 * with the 400 in out when it is longer. */
static bool rel_path(const char *rest, size_t n, char *rel, size_t cap, struct ld_response *out) {
  if (n >= cap) {
    struct ld_err e;
    ld_errf(&e, LD_INVALID, "path longer than 1024 bytes");
    ld_json_error(out, &e);
    return false;
  }
  memcpy(rel, rest, n);
  rel[n] = 0;
  return true;
}

/* /files/<path>/rows, /files/<path>, and the listings /files/, /files/<dir>/ (and /files). */
static void route_files(struct ld_req *r, const char *rest, bool get, struct ld_response *out) {
  size_t n = strlen(rest);
  char rel[1100];
  if (n >= 5 && !strcmp(rest + n - 5, "/rows")) {
    r->route = LD_R_ROWS;
    if (!get && !is(r->method, "POST")) return method_not_allowed(r, "GET, HEAD, POST", out);
    if (rel_path(rest, n - 5, rel, sizeof rel, out)) ld_rows_handle(r, rel, out);
    return;
  }
  r->route = LD_R_FILE;
  if (!get) return method_not_allowed(r, "GET, HEAD", out);
  if (n == 0 || rest[n - 1] == '/') { /* a directory: what is served beneath it */
    if (rel_path(rest, n ? n - 1 : 0, rel, sizeof rel, out)) ld_listing_handle(r, rel, out);
    return;
  }
  ld_file_handle(r, rest, out);
}

static void route_healthz(struct ld_response *out) {
  out->content_type = "application/json";
  if (ld_draining) {
    out->status = 503;
    out->retry_after = 1;
    ld_buf_puts(&out->body, "{\"status\":\"draining\"}\n");
  } else {
    out->status = 200;
    ld_buf_puts(&out->body, "{\"status\":\"serving\"}\n");
  }
}

static void route_metrics(struct ld_response *out) {
  out->status = 200;
  out->content_type = "text/plain; version=0.0.4; charset=utf-8";
  ld_metrics_render(&out->body, ld_server_connections(), ld_server_inflight());
}

void ld_route(struct ld_req *r, struct ld_response *out) {
  const char *url = r->url, *m = r->method;
  bool get = is(m, "GET") || is(m, "HEAD");
  struct ld_err e;
  if (r->grpc) return ld_grpc_handle(r, out);
  const char *twice = ld_arg_twice(r);
  if (twice == ld_query_too_many) {
    ld_errf(&e, LD_INVALID, "a query of more than %d parameters", LD_QUERY_MAX_PARAMS);
    return ld_error_for(r, out, &e);
  }
  if (twice) {
    ld_errf(&e, LD_INVALID, "query parameter '%.60s' given more than once", twice);
    return ld_error_for(r, out, &e);
  }
  /* "/files" is the listing of the root, as "/files/" is. */
  if (!strncmp(url, "/files/", 7) || is(url, "/files")) return route_files(r, url[6] ? url + 7 : "", get, out);
  if (!strncmp(url, LD_ROWSERVICE_PREFIX, strlen(LD_ROWSERVICE_PREFIX))) {
    const char *method = url + strlen(LD_ROWSERVICE_PREFIX);
    r->route = is(method, "GetFile") ? LD_R_GETFILE : LD_R_TAKE;
    if (!is(m, "POST")) return method_not_allowed(r, "POST", out);
    return ld_connect_handle(r, method, out);
  }
  if (is(url, "/healthz") || is(url, "/metrics")) {
    bool health = is(url, "/healthz");
    r->route = health ? LD_R_HEALTHZ : LD_R_METRICS;
    if (!get) return method_not_allowed(r, "GET, HEAD", out);
    return health ? route_healthz(out) : route_metrics(out);
  }
  ld_errf(&e, LD_NOT_FOUND,
          "no route for %.200s; try /files/, /files/<path>/rows?ids=..., /files/<path>, /healthz, /metrics",
          url);
  ld_json_error(out, &e);
}
