/* lanced's HTTP/1.1 request framing (daemon/lanced/h1parse.c): where a head ends (every split
 * of the input), the request line and fields parsed in place, the framing a proxy could read
 * otherwise refused (RFC 9112 §3.2, §5, §6.1, §6.3), chunk-size and trailer lines, bare LFs
 * anywhere. The daemon's answers to the same inputs are tests/integration/daemon_framing.py. */
#include <check.h>
#include "support/support.h"
#include <stdlib.h>
#include <string.h>
#include "../../daemon/lanced/errors.c"
#include "../../daemon/lanced/h1parse.c"

/* Parses text as a whole head: ld_h1_head_end must find its end at its last byte, then
 * ld_h1_parse_head's result is returned (e filled when -1). buf keeps the parsed copy. */
static int parse(const char *text, char *buf, struct ld_h1_head *h, struct ld_err *e) {
  size_t len = strlen(text), scan = 0;
  memcpy(buf, text, len + 1);
  long end = ld_h1_head_end(buf, len, &scan, e);
  if (end < 0) return -2;
  ck_assert_int_eq(end, (long)len);
  return ld_h1_parse_head(buf, len, h, e);
}

static const char GET[] = "GET /files/a.lance/rows?ids=1,2 HTTP/1.1\r\nHost: x\r\nAccept:  application/json \r\n"
                          "X-Tab:\tv\t\r\nConnection: Keep-Alive, Close\r\n\r\n";

START_TEST(test_head_end_every_split) {
  size_t len = strlen(GET);
  struct ld_err e;
  for (size_t cut = 0; cut <= len; cut++) {
    size_t scan = 0;
    long end = ld_h1_head_end(GET, cut, &scan, &e);
    ck_assert_int_eq(end, cut == len ? (long)len : 0);
    if (cut < len) ck_assert_int_eq(ld_h1_head_end(GET, len, &scan, &e), (long)len); /* resumed from scan */
  }
  /* Behind the head: a body or a pipelined request, not part of it. */
  char more[512];
  snprintf(more, sizeof more, "%sGET / HTTP/1.1\r\n", GET);
  size_t scan = 0;
  ck_assert_int_eq(ld_h1_head_end(more, strlen(more), &scan, &e), (long)len);
}
END_TEST

START_TEST(test_parse_fields) {
  char buf[512];
  struct ld_h1_head h;
  struct ld_err e;
  ck_assert_int_eq(parse(GET, buf, &h, &e), 0);
  ck_assert_str_eq(h.method, "GET");
  ck_assert_str_eq(h.target, "/files/a.lance/rows?ids=1,2");
  ck_assert_int_eq(h.minor, 1);
  ck_assert_int_eq(h.nfields, 4);
  ck_assert_str_eq(ld_h1_field(&h, "accept"), "application/json"); /* OWS dropped, name case-insensitive */
  ck_assert_str_eq(ld_h1_field(&h, "X-TAB"), "v");
  ck_assert_ptr_null(ld_h1_field(&h, "Content-Length"));
  ck_assert(h.close && h.keep_alive && !h.has_length && !h.chunked && h.hosts == 1);
  ck_assert_int_eq(parse("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\ncontent-length: 12\r\n"
                         "Expect: 100-Continue\r\nEmpty:\r\n\r\n",
                         buf, &h, &e),
                   0);
  ck_assert(h.has_length && h.length == 12 && h.expect_continue);
  ck_assert_str_eq(ld_h1_field(&h, "Empty"), "");
  ck_assert_int_eq(parse("POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n", buf, &h, &e), 0);
  ck_assert(h.chunked && !h.has_length);
  ck_assert_int_eq(parse("GET / HTTP/1.0\r\n\r\n", buf, &h, &e), 0); /* HTTP/1.0 needs no Host */
  ck_assert_int_eq(h.minor, 0);
  ck_assert_int_eq(parse("GET /caf\xc3\xa9 HTTP/1.1\r\nHost: x\r\nX: \xff\r\n\r\n", buf, &h, &e), 0); /* obs-text */
}
END_TEST

/* Each of these is a 400 (or the status given) whose message contains the words given. */
static const struct {
  const char *head, *words;
  int status;
} BAD[] = {
    {"GET / HTTP/1.1\nHost: x\r\n\r\n", "bare LF", 400},
    {"GET / HTTP/1.1\r\nHost: x\n\r\n", "bare LF", 400},
    {"GET / HTTP/1.1\r\nHost: x\r\n\n", "bare LF", 400},
    {"GET  / HTTP/1.1\r\nHost: x\r\n\r\n", "malformed request line", 400},
    {"GET / HTTP/1.1 \r\nHost: x\r\n\r\n", "malformed request line", 400},
    {"GET /\x01 HTTP/1.1\r\nHost: x\r\n\r\n", "control byte", 400},
    {"G(T / HTTP/1.1\r\nHost: x\r\n\r\n", "malformed request line", 400},
    {"GET / HTTP/2.0\r\nHost: x\r\n\r\n", "HTTP version", 505},
    {"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "more than one Host", 400},
    {"GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", "without a Host", 400},
    {"GET / HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n", "without a colon", 400},
    {"GET / HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n", "whitespace between", 400},
    {"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n", "whitespace between", 400},
    {"GET / HTTP/1.1\r\nHost: x\r\nA(b: v\r\n\r\n", "not allowed in a header's name", 400},
    {"GET / HTTP/1.1\r\nHost: x\r\n: v\r\n\r\n", "empty name", 400},
    {"GET / HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n", "obs-fold", 400},
    {"GET / HTTP/1.1\r\nHost: x\r\nX: a\x7f\r\n\r\n", "control byte", 400},
    {"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nContent-Length: 12\r\n\r\n", "conflicting Content-Length", 400},
    {"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n", "malformed Content-Length", 400},
    {"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", "malformed Content-Length", 400},
    {"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n", "malformed Content-Length", 400},
    {"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", "both Content-Length", 400},
    {"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "unsupported Transfer-Encoding", 400},
    {"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", "unsupported Transfer-Encoding", 400},
    {"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", "HTTP/1.0", 400},
};

START_TEST(test_parse_refusals) {
  for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
    char buf[512];
    struct ld_h1_head h;
    struct ld_err e = {0};
    int rc = parse(BAD[i].head, buf, &h, &e);
    ck_assert_msg(rc != 0, "accepted: %s", BAD[i].head);
    ck_assert_msg(e.http == BAD[i].status && strstr(e.message, BAD[i].words), "%s: got %d '%s', want %d '%s'",
                  BAD[i].head, e.http, e.message, BAD[i].status, BAD[i].words);
  }
}
END_TEST

/* NUL bytes cannot travel in the C strings above: placed by length. */
START_TEST(test_parse_nul) {
  static const char line[] = "GET /a\0b HTTP/1.1\r\nHost: x\r\n\r\n", field[] = "GET / HTTP/1.1\r\nHost: x\r\nX-\0: v\r\n\r\n",
                    value[] = "GET / HTTP/1.1\r\nHost: x\r\nX: a\0b\r\n\r\n";
  const struct {
    const char *p;
    size_t n;
    const char *words;
  } cases[] = {{line, sizeof line - 1, "NUL byte in the request line"},
               {field, sizeof field - 1, "NUL byte in a header's name"},
               {value, sizeof value - 1, "NUL byte in header X"}};
  for (size_t i = 0; i < 3; i++) {
    char buf[128];
    struct ld_h1_head h;
    struct ld_err e = {0};
    size_t scan = 0;
    memcpy(buf, cases[i].p, cases[i].n);
    ck_assert_int_eq(ld_h1_head_end(buf, cases[i].n, &scan, &e), (long)cases[i].n);
    ck_assert_int_eq(ld_h1_parse_head(buf, cases[i].n, &h, &e), -1);
    ck_assert_msg(strstr(e.message, cases[i].words), "%s", e.message);
  }
}
END_TEST

START_TEST(test_too_many_fields) {
  char buf[8192] = "GET / HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < LD_H1_MAX_FIELDS; i++) snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "X%d: %d\r\n", i, i);
  strcat(buf, "\r\n");
  char copy[8192];
  struct ld_h1_head h;
  struct ld_err e;
  ck_assert_int_eq(parse(buf, copy, &h, &e), -1);
  ck_assert_int_eq(e.http, 431);
}
END_TEST

START_TEST(test_chunk_lines) {
  uint64_t size;
  size_t used;
  struct ld_err e = {0};
  ck_assert_int_eq(ld_h1_chunk_size("1a\r\nxyz", 7, &size, &used, &e), 1);
  ck_assert(size == 26 && used == 4);
  ck_assert_int_eq(ld_h1_chunk_size("0;name=\"v\"; x \r\n", 16, &size, &used, &e), 1);
  ck_assert(size == 0 && used == 16);
  ck_assert_int_eq(ld_h1_chunk_size("ffffffffffffffff\r\n", 18, &size, &used, &e), 1);
  ck_assert(size == UINT64_MAX);
  ck_assert_int_eq(ld_h1_chunk_size("000000000000000000001\r\n", 23, &size, &used, &e), 1); /* leading zeros */
  ck_assert(size == 1);
  ck_assert_int_eq(ld_h1_chunk_size("1a", 2, &size, &used, &e), 0); /* not all in */
  ck_assert_int_eq(ld_h1_chunk_size("1a\r", 3, &size, &used, &e), 0);
  const char *bad[] = {"1a\n", "10000000000000000\r\n", "\r\n", "x\r\n", "1 2\r\n", "-1\r\n", "1;\x01\r\n"};
  const char *words[] = {"bare LF", "over 2^64", "malformed", "malformed", "malformed", "malformed", "control byte"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ck_assert_int_eq(ld_h1_chunk_size(bad[i], strlen(bad[i]), &size, &used, &e), -1);
    ck_assert_msg(strstr(e.message, words[i]), "%s: %s", bad[i], e.message);
  }
  char longline[LD_H1_CHUNK_LINE_MAX + 8];
  memset(longline, '0', sizeof longline);
  ck_assert_int_eq(ld_h1_chunk_size(longline, sizeof longline, &size, &used, &e), -1);
  ck_assert_int_eq(ld_h1_trailer_line("X-T: 1\r\n\r\n", 10, &used, &e), 1);
  ck_assert_int_eq(used, 8);
  ck_assert_int_eq(ld_h1_trailer_line("\r\n", 2, &used, &e), 2);
  ck_assert_int_eq(ld_h1_trailer_line("X-T: 1", 6, &used, &e), 0);
  ck_assert_int_eq(ld_h1_trailer_line("X-T: 1\n", 7, &used, &e), -1);
  ck_assert_int_eq(ld_h1_trailer_line("no colon\r\n", 10, &used, &e), -1);
  ck_assert_int_eq(ld_h1_trailer_line("\n", 1, &used, &e), -1);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("h1");
  TCase *t = tcase_create("h1");
  tcase_add_test(t, test_head_end_every_split);
  tcase_add_test(t, test_parse_fields);
  tcase_add_test(t, test_parse_refusals);
  tcase_add_test(t, test_parse_nul);
  tcase_add_test(t, test_too_many_fields);
  tcase_add_test(t, test_chunk_lines);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tsup_run(suite()); }
