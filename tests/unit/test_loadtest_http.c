/* lanced-load's HTTP/1.1 response parser and request builder: Content-Length, chunked
 * (extensions, trailers), read-until-close, responses without body, 1xx, pipelined
 * keep-alive responses, every possible split of the input, malformed input; GET vs POST. */
#include <check.h>
#include "support/support.h"
#include <stdlib.h>
#include "../../loadtest/http_parse.c"
#include "../../loadtest/request.c"
#include "../../loadtest/sbuf.c"

/* Feeds text cut into pieces at the given positions; returns the final result. */
static ld_http_result feed_split(ld_http_resp *p, const char *text, size_t len, size_t cut1, size_t cut2,
                                 size_t *total_used) {
  size_t cuts[4] = {0, cut1 < len ? cut1 : len, cut2 < len ? cut2 : len, len};
  if (cuts[2] < cuts[1]) cuts[2] = cuts[1];
  *total_used = 0;
  ld_http_result r = LD_HTTP_MORE;
  for (int i = 0; i < 3 && r == LD_HTTP_MORE; i++) {
    size_t used;
    r = ld_http_resp_feed(p, text + cuts[i], cuts[i + 1] - cuts[i], &used);
    *total_used += used;
    if (r == LD_HTTP_MORE && used != cuts[i + 1] - cuts[i]) return LD_HTTP_ERROR;
  }
  return r;
}

static const char CL_RESP[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 13\r\n"
                              "X-Other: a:b\r\n\r\n{\"num_rows\":1}";
/* "{\"num_rows\":1}" is 14 bytes; the response above announces 13, so it ends one early. */

static const char CHUNKED[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
                              "5;name=val\r\nhello\r\n1\r\n \r\n0B\r\nchunked wor\r\n2\r\nld\r\n"
                              "0\r\nX-Trailer: 1\r\n\r\n";

START_TEST(test_content_length_every_split) {
  size_t len = strlen(CL_RESP);
  ld_http_resp *p = calloc(1, sizeof *p);
  for (size_t a = 0; a <= len; a++)
    for (size_t b = a; b <= len; b += 7) {
      ld_http_resp_reset(p, false, true);
      size_t used;
      ck_assert_int_eq(feed_split(p, CL_RESP, len, a, b, &used), LD_HTTP_DONE);
      ck_assert_uint_eq(used, len - 1); /* the 14th body byte belongs to the next response */
      ck_assert_int_eq(p->status, 200);
      ck_assert_int_eq(p->content_length, 13);
      ck_assert(!p->close && !p->chunked);
      ck_assert_uint_eq(p->body_len, 13);
      ck_assert_int_eq(memcmp(p->body, "{\"num_rows\":1", 13), 0);
      ck_assert_str_eq(p->content_type, "application/json");
    }
  ld_http_resp_free(p);
  free(p);
}
END_TEST

START_TEST(test_chunked_every_split) {
  size_t len = strlen(CHUNKED);
  ld_http_resp *p = calloc(1, sizeof *p);
  for (size_t a = 0; a <= len; a++)
    for (size_t b = a; b <= len; b++) {
      ld_http_resp_reset(p, false, true);
      size_t used;
      ld_http_result r = feed_split(p, CHUNKED, len, a, b, &used);
      if (r != LD_HTTP_DONE || used != len || p->body_len != 19 || memcmp(p->body, "hello chunked world", 19))
        ck_abort_msg("split %zu/%zu: r=%d used=%zu body=%zu err=%s", a, b, r, used, p->body_len, p->error);
    }
  ck_assert(p->chunked);
  ck_assert_int_eq(memcmp(p->body, "hello chunked world", 19), 0);
  ck_assert_uint_eq(p->body_bytes, 19);
  ld_http_resp_free(p);
  free(p);
}
END_TEST

START_TEST(test_pipelined_keepalive) {
  /* Three responses back to back in one buffer, as a pipelining server would send them. */
  const char *text = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"
                     "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"
                     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\nxy\r\n0\r\n\r\n";
  size_t len = strlen(text), off = 0;
  ld_http_resp p;
  memset(&p, 0, sizeof p);
  int statuses[3];
  for (int i = 0; i < 3; i++) {
    ld_http_resp_reset(&p, false, false);
    size_t used;
    ck_assert_int_eq(ld_http_resp_feed(&p, text + off, len - off, &used), LD_HTTP_DONE);
    statuses[i] = p.status;
    off += used;
  }
  ck_assert_uint_eq(off, len);
  ck_assert_int_eq(statuses[0], 200);
  ck_assert_int_eq(statuses[1], 404);
  ck_assert_int_eq(statuses[2], 200);
  ck_assert(p.close);
  ck_assert_uint_eq(p.body_bytes, 2);
}
END_TEST

START_TEST(test_close_delimited_and_short) {
  ld_http_resp p;
  memset(&p, 0, sizeof p);
  size_t used;
  const char *t = "HTTP/1.0 200 OK\r\nServer: x\r\n\r\nsome body";
  ld_http_resp_reset(&p, false, true);
  ck_assert_int_eq(ld_http_resp_feed(&p, t, strlen(t), &used), LD_HTTP_MORE);
  ck_assert_int_eq(ld_http_resp_eof(&p), LD_HTTP_DONE);
  ck_assert(p.close);
  ck_assert_uint_eq(p.body_len, 9);

  t = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort";
  ld_http_resp_reset(&p, false, false);
  ck_assert_int_eq(ld_http_resp_feed(&p, t, strlen(t), &used), LD_HTTP_MORE);
  ck_assert_int_eq(ld_http_resp_eof(&p), LD_HTTP_ERROR);

  t = "HTTP/1.1 200 OK\r\nContent-";
  ld_http_resp_reset(&p, false, false);
  ck_assert(ld_http_resp_untouched(&p));
  ck_assert_int_eq(ld_http_resp_feed(&p, t, strlen(t), &used), LD_HTTP_MORE);
  ck_assert(!ld_http_resp_untouched(&p));
  ck_assert_int_eq(ld_http_resp_eof(&p), LD_HTTP_ERROR);

  /* HTTP/1.0 with keep-alive stays open. */
  t = "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n";
  ld_http_resp_reset(&p, false, false);
  ck_assert_int_eq(ld_http_resp_feed(&p, t, strlen(t), &used), LD_HTTP_DONE);
  ck_assert(!p.close);
  ld_http_resp_free(&p);
}
END_TEST

START_TEST(test_no_body_and_interim) {
  ld_http_resp p;
  memset(&p, 0, sizeof p);
  size_t used;
  const char *t = "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n";
  ld_http_resp_reset(&p, false, false);
  ck_assert_int_eq(ld_http_resp_feed(&p, t, strlen(t), &used), LD_HTTP_DONE);
  ck_assert(p.no_body);
  t = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";
  ld_http_resp_reset(&p, true, false); /* HEAD */
  ck_assert_int_eq(ld_http_resp_feed(&p, t, strlen(t), &used), LD_HTTP_DONE);
  ck_assert_uint_eq(used, strlen(t));
  t = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok";
  ld_http_resp_reset(&p, false, false);
  ck_assert_int_eq(ld_http_resp_feed(&p, t, strlen(t), &used), LD_HTTP_DONE);
  ck_assert_int_eq(p.status, 201);
  ck_assert_uint_eq(used, strlen(t));
}
END_TEST

START_TEST(test_malformed) {
  const char *bad[] = {
      "HTTP/2 200 OK\r\n\r\n",
      "HTTP/1.1 20 OK\r\n\r\n",
      "HTTP/1.1 abc OK\r\n\r\n",
      "garbage\r\n\r\n",
      "HTTP/1.1 200 OK\r\nNoColonHere\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: 12x\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX\r\n",
  };
  ld_http_resp p;
  memset(&p, 0, sizeof p);
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    ld_http_resp_reset(&p, false, false);
    size_t used;
    ck_assert_msg(ld_http_resp_feed(&p, bad[i], strlen(bad[i]), &used) == LD_HTTP_ERROR, "accepted: %s", bad[i]);
    ck_assert(p.error[0]);
  }
  /* An endless header line is refused instead of growing without bound. */
  char *big = malloc(LD_HTTP_LINE_MAX + 64);
  memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
  memset(big + 20, 'a', LD_HTTP_LINE_MAX + 40);
  ld_http_resp_reset(&p, false, false);
  size_t used;
  ck_assert_int_eq(ld_http_resp_feed(&p, big, LD_HTTP_LINE_MAX + 60, &used), LD_HTTP_ERROR);
  free(big);
}
END_TEST

START_TEST(test_request_get_post) {
  ld_req_tmpl t;
  ld_req_params prm = {.host_header = "127.0.0.1:8080", .prefix = "", .file = "dir/my file.lance", .columns = "a,b", .format = "arrow"};
  ld_req_tmpl_init(&t, &prm);
  uint64_t ids[3] = {1, 50, 9};
  ld_sbuf out = {0};
  bool post;
  ld_req_build(&t, ids, 3, &out, &post);
  ck_assert(!post);
  ck_assert_str_eq(out.p, "GET /files/dir/my%20file.lance/rows?ids=1,50,9&columns=a,b&format=arrow HTTP/1.1\r\n"
                          "Host: 127.0.0.1:8080\r\nUser-Agent: lanced-load\r\n\r\n");
  ld_req_tmpl_free(&t);

  prm.post_threshold = 2; /* more than 2 ids: POST */
  ld_req_tmpl_init(&t, &prm);
  ld_req_build(&t, ids, 3, &out, &post);
  ck_assert(post);
  const char *body = "{\"ids\":[1,50,9],\"columns\":[\"a\",\"b\"]}";
  char want[512];
  snprintf(want, sizeof want,
           "POST /files/dir/my%%20file.lance/rows?format=arrow HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"
           "User-Agent: lanced-load\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
           strlen(body), body);
  ck_assert_str_eq(out.p, want);
  ld_req_build(&t, ids, 2, &out, &post);
  ck_assert(!post);
  ld_req_tmpl_free(&t);

  /* Automatic threshold: the GET target would pass 2 KB. */
  prm.post_threshold = 0;
  prm.columns = NULL;
  prm.format = NULL;
  ld_req_tmpl_init(&t, &prm);
  uint64_t many[400];
  for (int i = 0; i < 400; i++) many[i] = 1000000 + (uint64_t)i;
  ld_req_build(&t, many, 100, &out, &post);
  ck_assert(!post);
  ld_req_build(&t, many, 400, &out, &post);
  ck_assert(post);
  const char *cl = strstr(out.p, "Content-Length: ");
  const char *b = strstr(out.p, "\r\n\r\n") + 4;
  ck_assert_uint_eq(strtoul(cl + 16, NULL, 10), strlen(b));
  ck_assert(strncmp(b, "{\"ids\":[1000000,", 16) == 0);
  ck_assert(strcmp(b + strlen(b) - 9, ",1000399]}") == 0 || strcmp(b + strlen(b) - 10, ",1000399]}") == 0);
  ld_req_tmpl_free(&t);

  /* Raw mode: a constant request with the URL prefix. */
  ld_req_params raw = {.host_header = "localhost", .prefix = "/base", .raw_path = "static/a.txt"};
  ld_req_tmpl_init(&t, &raw);
  ld_req_build(&t, NULL, 0, &out, &post);
  ck_assert_str_eq(out.p, "GET /base/static/a.txt HTTP/1.1\r\nHost: localhost\r\n\r\n");
  ld_req_tmpl_free(&t);
  ld_sbuf_free(&out);
}
END_TEST

int main(void) {
  Suite *s = suite_create("loadtest_http");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_content_length_every_split);
  tcase_add_test(tc, test_chunked_every_split);
  tcase_add_test(tc, test_pipelined_keepalive);
  tcase_add_test(tc, test_close_delimited_and_short);
  tcase_add_test(tc, test_no_body_and_interim);
  tcase_add_test(tc, test_malformed);
  tcase_add_test(tc, test_request_get_post);
  suite_add_tcase(s, tc);
  return tsup_run(s);
}
