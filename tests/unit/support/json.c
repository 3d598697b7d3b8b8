/* See support.h: JSON rows bodies. */
#include "support.h"
#include "lance.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *tsup_json_try(struct ArrowSchema *s, struct ArrowArray *a, struct lnc_error *err) {
  struct lnc_buf b = {0};
  int rc = lnc_encode_json(s, a, &b, err);
  if (rc) {
    if (!err->code) err->code = rc;
    lnc_buf_free(&b);
    return NULL;
  }
  char *out = malloc(b.len + 1);
  if (out) {
    memcpy(out, b.data, b.len);
    out[b.len] = 0;
  }
  lnc_buf_free(&b);
  return out;
}

char *tsup_json(struct ArrowSchema *s, struct ArrowArray *a) {
  struct lnc_error err = {0};
  char *out = tsup_json_try(s, a, &err);
  ck_assert_msg(out != NULL, "lnc_encode_json: %s", err.message);
  return out;
}

void tsup_expect_json(struct ArrowSchema *s, struct ArrowArray *a, const char *want) {
  char *j = tsup_json(s, a);
  ck_assert_str_eq(j, want);
  free(j);
  a->release(a);
  s->release(s);
}

size_t tsup_first_diff(const char *a, size_t an, const char *b, size_t bn) {
  size_t i = 0;
  while (i < an && i < bn && a[i] == b[i]) i++;
  return i;
}

void tsup_excerpt(char *dst, size_t cap, const char *s, size_t n, size_t at) {
  size_t from = at > 30 ? at - 30 : 0;
  size_t len = n - from < 100 ? n - from : 100;
  snprintf(dst, cap, "%s%.*s%s", from ? "..." : "", (int)len, s + from, from + len < n ? "..." : "");
}

bool tsup_body_eq(const char *want, size_t wn, const char *got, size_t gn, char *msg, size_t cap) {
  if (wn == gn && memcmp(want, got, wn) == 0) return true;
  char e1[160], e2[160];
  size_t d = tsup_first_diff(want, wn, got, gn);
  tsup_excerpt(e1, sizeof e1, want, wn, d);
  tsup_excerpt(e2, sizeof e2, got, gn, d);
  snprintf(msg, cap, "differs at byte %zu: want %s | got %s", d, e1, e2);
  return false;
}
