/* lib/io/s3.c without a network: the listing page parser (entities, character references,
 * continuation tokens, malformed pages), the client's configuration checks and the page
 * cache. The exchanges
 * themselves are tested against s3rver by tests/s3/objstore.mjs. */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include "support/support.h"
#include "io/s3.h"
#include "cache/cache.h"
#include "lance.h"

struct seen {
  int n;
  char keys[4][64];
  uint64_t sizes[4];
};

static int collect(void *ctx, const char *key, uint64_t size) {
  struct seen *s = ctx;
  if (s->n < 4) {
    snprintf(s->keys[s->n], sizeof s->keys[0], "%s", key);
    s->sizes[s->n] = size;
  }
  s->n++;
  return 0;
}

static int parse(const char *xml, struct seen *s, char *token, struct lnc_error *e) {
  memset(s, 0, sizeof *s);
  return lnc_s3_parse_list_page(xml, strlen(xml), "s3://b/p", token, 64, collect, s, e);
}

START_TEST(test_entities_and_token) {
  struct seen s;
  char token[64];
  struct lnc_error e = {0};
  const char *xml = "<ListBucketResult><IsTruncated>true</IsTruncated>"
                    "<NextContinuationToken>t&#x2F;k&#61;</NextContinuationToken>"
                    "<Contents><Key>a&#x1F600;b&#233;&apos;&quot;&amp;&lt;&gt;</Key><Size>7</Size></Contents>"
                    "<Contents><Key>x</Key><Size>18446744073709551615</Size></Contents></ListBucketResult>";
  ck_assert_int_eq(parse(xml, &s, token, &e), 0);
  ck_assert_int_eq(s.n, 2);
  ck_assert_str_eq(s.keys[0], "a\xf0\x9f\x98\x80"
                              "b\xc3\xa9'\"&<>");
  ck_assert_uint_eq(s.sizes[0], 7);
  ck_assert_str_eq(s.keys[1], "x");
  ck_assert_uint_eq(s.sizes[1], UINT64_MAX);
  ck_assert_str_eq(token, "t/k=");
}
END_TEST

START_TEST(test_last_page_and_empty) {
  struct seen s;
  char token[64] = "stale";
  ck_assert_int_eq(parse("<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>", &s, token, NULL), 0);
  ck_assert_int_eq(s.n, 0);
  ck_assert_str_eq(token, "");
}
END_TEST

/* Each malformed page is an error naming where, never a key cut short or a size made up. */
START_TEST(test_malformed) {
  static const char *bad[] = {
      "<Contents><Key>k</Key></Contents>",                                  /* no Size */
      "<Contents><Size>1</Size></Contents>",                                /* no Key */
      "<Contents><Key>k</Key><Size>12x</Size></Contents>",                  /* Size not a number */
      "<Contents><Key>k</Key><Size>99999999999999999999</Size></Contents>", /* Size past 64 bits */
      "<Contents><Key>k</Key><Size>1</Size>",                               /* unclosed Contents */
      "<Contents><Key>&#0;</Key><Size>1</Size></Contents>",                 /* NUL by reference */
      "<Contents><Key>&#x110000;</Key><Size>1</Size></Contents>",           /* past Unicode */
      "<IsTruncated>true</IsTruncated>",                                    /* truncated, no token */
      "<IsTruncated>true</IsTruncated><NextContinuationToken></NextContinuationToken>",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    struct seen s;
    char token[64];
    struct lnc_error e = {0};
    ck_assert_msg(parse(bad[i], &s, token, &e) == LNC_EIO, "page %zu accepted", i);
    ck_assert_msg(strstr(e.message, "s3://b/p: ") == e.message, "page %zu: %s", i, e.message);
  }
  /* A key longer than the parser keeps is refused, not truncated. */
  static char big[3000];
  strcpy(big, "<Contents><Key>");
  memset(big + strlen(big), 'k', 1500);
  strcat(big, "</Key><Size>1</Size></Contents>");
  struct seen s;
  char token[64];
  ck_assert_int_eq(parse(big, &s, token, NULL), LNC_EIO);
  ck_assert_int_eq(s.n, 0);
}
END_TEST

/* A raw NUL inside a Key, like &#0;, is refused: as a C string it would end the key early
 * (".../1.manifest\0evil" would be listed as 1.manifest). */
START_TEST(test_raw_nul_in_key) {
  static const char page[] = "<Contents><Key>d/_versions/1.manifest\0evil</Key><Size>1</Size></Contents>";
  struct seen s = {0};
  char token[64];
  struct lnc_error e = {0};
  ck_assert_int_eq(lnc_s3_parse_list_page(page, sizeof page - 1, "s3://b/p", token, sizeof token, collect, &s, &e), LNC_EIO);
  ck_assert_int_eq(s.n, 0);
}
END_TEST

/* A path whose key the store cannot hold (an empty component, too long for a listing prefix)
 * is no dataset: the listing fails before any exchange with LNC_EINVAL, which is 1, the same
 * number as the "found one" stop. The endpoint is a closed port; nothing is sent. */
START_TEST(test_is_dataset_bad_key) {
  struct lnc_s3_config cfg = {.endpoint = "http://127.0.0.1:9", .access_key = "AKID", .secret_key = "s", .max_attempts = 1, .deadline_ms = 2000};
  struct lnc_s3_mount *m = NULL;
  struct lnc_error e = {0};
  ck_assert_msg(lnc_s3_mount_new("s3://b/pre", &cfg, LNC_S3_PATH, NULL, &m, &e) == 0, "%s", e.message);
  ck_assert(!lnc_remote_is_dataset(m, "a//b"));
  ck_assert(!lnc_remote_is_dataset(m, "a/../b"));
  static char longname[1016];
  memset(longname, 'n', sizeof longname - 1);
  ck_assert(!lnc_remote_is_dataset(m, longname));
  lnc_s3_mount_free(m);
}
END_TEST

START_TEST(test_config_checked) {
  struct lnc_s3 *c = NULL;
  struct lnc_error e = {0};
  struct lnc_s3_config cfg = {.bucket = "b", .access_key = "AKID", .secret_key = "very-secret"};
  ck_assert_int_eq(lnc_s3_new(&cfg, &c, &e), 0);
  lnc_s3_free(c);
  cfg.endpoint = "ftp://host";
  ck_assert_int_eq(lnc_s3_new(&cfg, &c, &e), LNC_EINVAL);
  ck_assert_ptr_null(strstr(e.message, "very-secret"));
  cfg.endpoint = "http://";
  ck_assert_int_eq(lnc_s3_new(&cfg, &c, &e), LNC_EINVAL);
  cfg.endpoint = NULL;
  cfg.bucket = "a/b";
  ck_assert_int_eq(lnc_s3_new(&cfg, &c, &e), LNC_EINVAL);
  cfg.bucket = "b";
  cfg.secret_key = NULL;
  ck_assert_int_eq(lnc_s3_new(&cfg, &c, NULL), LNC_EINVAL); /* a NULL error struct is fine */
  ck_assert_ptr_null(c);
}
END_TEST

/* The page cache: a read is served only when every block it touches is there (the last
 * block of an object may be short), versions (ids) never mix, and the budget evicts the
 * least recently used block first. */
START_TEST(test_page_cache) {
  struct lnc_s3_cache *c;
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_s3_cache_new(1 << 20, 3000, &c, &err), LNC_EINVAL); /* not a power of two */
  ck_assert_int_eq(lnc_s3_cache_new(3 * 4096, 4096, &c, &err), 0);
  uint8_t blk[4096], out[8192];
  uint64_t a = lnc_s3_cache_new_id(c), b = lnc_s3_cache_new_id(c);
  ck_assert_uint_ne(a, b);
  for (int i = 0; i < 4096; i++) blk[i] = (uint8_t)i;
  lnc_s3_cache_insert(c, a, 0, blk, 4096);
  ck_assert(lnc_s3_cache_read(c, a, 10, 100, out));
  ck_assert_int_eq(out[0], 10);
  ck_assert(!lnc_s3_cache_read(c, b, 10, 100, out));   /* another version */
  ck_assert(!lnc_s3_cache_read(c, a, 4000, 200, out)); /* block 1 missing */
  lnc_s3_cache_insert(c, a, 1, blk, 100);              /* a short last block */
  ck_assert(lnc_s3_cache_read(c, a, 4000, 196, out));
  ck_assert_int_eq(out[96], 0);
  ck_assert(!lnc_s3_cache_read(c, a, 4000, 197, out)); /* past the short block */
  ck_assert(lnc_s3_cache_read(c, a, 0, 0, out));
  /* Budget 3 blocks: a (block 0, 4096 B) is read again so block 1 is the oldest. */
  lnc_s3_cache_insert(c, b, 0, blk, 4096);
  ck_assert(lnc_s3_cache_read(c, a, 0, 1, out));
  lnc_s3_cache_insert(c, b, 1, blk, 4096);
  struct lnc_s3_cache_stats st;
  lnc_s3_cache_stats(c, &st);
  ck_assert_uint_le(st.bytes, 3 * 4096);
  ck_assert_uint_eq(st.evictions, 1);
  ck_assert(!lnc_s3_cache_read(c, a, 4000, 196, out)); /* evicted */
  ck_assert(lnc_s3_cache_read(c, a, 0, 4096, out));
  ck_assert(lnc_s3_cache_read(c, b, 100, 5000, out)); /* spans b's two blocks */
  ck_assert_int_eq(out[4095 - 100 + 1], 0);
  lnc_s3_cache_stats(c, &st);
  ck_assert_uint_eq(st.hits, 5); /* the empty read counts as neither */
  ck_assert_uint_eq(st.misses, 4);
  lnc_s3_cache_free(c);
}
END_TEST

static Suite *suite(void) {
  Suite *su = suite_create("s3");
  TCase *t = tcase_create("s3");
  tcase_add_test(t, test_entities_and_token);
  tcase_add_test(t, test_last_page_and_empty);
  tcase_add_test(t, test_malformed);
  tcase_add_test(t, test_config_checked);
  tcase_add_test(t, test_raw_nul_in_key);
  tcase_add_test(t, test_is_dataset_bad_key);
  tcase_add_test(t, test_page_cache);
  suite_add_tcase(su, t);
  return su;
}

int main(void) { return tsup_run(suite()); }
