/* libFuzzer target: one S3 ListObjectsV2 page as a store sends it (lib/io/s3.c
 * lnc_s3_parse_list_page): <Contents> blocks, Key and Size, XML entities and character
 * references, IsTruncated and the continuation token. The answer comes from the network, so it
 * is untrusted input like a file. Seeds: pages s3rver answered for the fixture datasets
 * (tests/fuzz/corpus/fuzz_s3list/). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "io/s3.h"

/* Reads every byte of the key it is given, so a key running past its buffer is reported. */
static int visit(void *ctx, const char *key, uint64_t size) {
  size_t *sum = ctx;
  *sum += strlen(key) + (size_t)(size & 1);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *xml = malloc(size + 1);
  if (!xml) return 0;
  memcpy(xml, data, size);
  xml[size] = 0;
  char token[1100];
  size_t sum = 0;
  struct lnc_error err;
  lnc_s3_parse_list_page(xml, size, "fuzz", token, sizeof token, visit, &sum, &err);
  lnc_s3_parse_list_page(xml, size, "fuzz", token, sizeof token, visit, &sum, NULL);
  free(xml);
  return 0;
}
