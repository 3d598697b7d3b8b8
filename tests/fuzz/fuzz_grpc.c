/* libFuzzer target: the parsers lanced added for HTTP/2 and gRPC — the query of an HTTP/2
 * request's :path split into parameters (h2.c ld_h2_split_query), a grpc-timeout value and a
 * gRPC request body's length-prefixed message (grpc.c). The first byte picks which; the rest
 * is the input. Each result is checked against what it must be: parameters inside the query's
 * bytes and at most the maximum (more flagged, not dropped unseen), a timeout finite and non-negative, a message inside the body.
 * Links every daemon file but main.c, as fuzz_request does. Seeds: tests/fuzz/corpus/fuzz_grpc/. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../daemon/lanced/lanced.h"
#include "../../daemon/lanced/routes.h"
#include "../../daemon/lanced/server.h"

#define MAX_ARGS 8 /* small, so inputs reach the bound */

static void query(const uint8_t *p, size_t n) {
  char *q = strndup((const char *)p, n);
  if (!q) return;
  size_t len = strlen(q);
  const char *keys[MAX_ARGS], *vals[MAX_ARGS], *twice;
  int k = ld_h2_split_query(q, keys, vals, MAX_ARGS, &twice);
  if (k < 0 || k > MAX_ARGS) abort();
  for (int i = 0; i < k; i++) /* every parameter lies within the query's own bytes */
    if (keys[i] < q || keys[i] > q + len || vals[i] < q || vals[i] > q + len || !keys[i][0]) abort();
  /* A name given twice lies in the query too; more parameters than max give the sentinel,
   * which needs all max slots taken. */
  if (twice == ld_query_too_many ? k != MAX_ARGS : twice && (twice < q || twice > q + len)) abort();
  free(q);
}

static void timeout(const uint8_t *p, size_t n) {
  char *v = strndup((const char *)p, n);
  if (!v) return;
  double secs = -1;
  if (ld_grpc_parse_timeout(v, &secs) == 0 && (!isfinite(secs) || secs < 0 || strlen(v) > 9)) abort();
  free(v);
}

static void unframe(const uint8_t *p, size_t n) {
  const uint8_t *msg = NULL;
  size_t len = 0;
  bool z = false;
  struct ld_err e;
  if (ld_grpc_unframe(p, n, &msg, &len, &z, &e) == 0 && (msg != p + 5 || len != n - 5)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!size) return 0;
  switch (data[0] % 3) {
  case 0: query(data + 1, size - 1); break;
  case 1: timeout(data + 1, size - 1); break;
  default: unframe(data + 1, size - 1); break;
  }
  return 0;
}
