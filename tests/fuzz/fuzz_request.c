/* libFuzzer target: the parsers of a rows request as the daemon receives it — the
 * percent-decoding of path and query values (server.c), the ids and columns query values, and
 * the body as JSON rows or as a protobuf TakeRequest (rows.c). The input is
 * "<ids>\n<columns>\n<body>"; its first byte's low bit picks the body codec. Links every
 * daemon file but main.c (Makefile: FUZZ_REQUEST_OBJS, scripts/fuzz.sh).
 * Seeds: tests/fuzz/corpus/fuzz_request/. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../../daemon/lanced/lanced.h"

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
  free(ids);
  free(cols);
  return 0;
}
