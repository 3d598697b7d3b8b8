/* libFuzzer target: the parsers of a rows request as the daemon receives it — the
 * percent-decoding of path and query values (server.c), the ids and columns query values, and
 * the body as JSON rows or as a protobuf TakeRequest (rows.c). The input is
 * "<ids>\n<columns>\n<body>"; its first byte's low bit picks the body codec, and for JSON
 * bodies its other bits the ids limit of a check that rows.c's fast ids path agrees with
 * jansson. Links every daemon file but main.c (Makefile: FUZZ_REQUEST_OBJS, scripts/fuzz.sh).
 * Seeds: tests/fuzz/corpus/fuzz_request/. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../daemon/lanced/lanced.h"
#include "../../daemon/lanced/routes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *nl1 = memchr(data, '\n', size);
  const uint8_t *nl2 = nl1 ? memchr(nl1 + 1, '\n', size - (size_t)(nl1 + 1 - data)) : NULL;
  size_t la = nl1 ? (size_t)(nl1 - data) : size;
  size_t lb = nl2 ? (size_t)(nl2 - nl1 - 1) : nl1 ? size - la - 1
                                                  : 0;
  char *ids = strndup((const char *)data, la), *cols = nl1 ? strndup((const char *)nl1 + 1, lb) : NULL;
  if (!ids) return 0;
  ld_url_unescape(ids);
  if (cols) ld_url_unescape(cols);
  const uint8_t *body = nl2 ? nl2 + 1 : NULL;
  size_t blen = nl2 ? size - (size_t)(body - data) : 0;
  struct ld_err e;
  ld_rows_parse(ids, cols, body, blen, size && (data[0] & 1) ? 2 : 1, 10000, &e);
  if (body && !(data[0] & 1)) {
    /* A JSON body's ids: the fast path for plain arrays and jansson alone must agree on the
     * ids and on every error, under a limit the first byte picks (1..128) so small inputs
     * reach it. */
    uint64_t max = 1 + (data[0] >> 1), *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    struct ld_err ea = {0}, eb = {0};
    int ra = ld_rows_json_ids(body, blen, max, false, &a, &na, &ea);
    int rb = ld_rows_json_ids(body, blen, max, true, &b, &nb, &eb);
    if (ra != rb || na != nb || (na && memcmp(a, b, na * sizeof *a)) || strcmp(ea.message, eb.message)) {
      fprintf(stderr, "fuzz_request: fast JSON ids differ: %d/%d %zu/%zu '%s' / '%s'\n", ra, rb, na, nb, ea.message,
              eb.message);
      abort();
    }
    free(a);
    free(b);
  }
  free(ids);
  free(cols);
  return 0;
}
