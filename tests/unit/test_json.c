/* Unit tests for lnc_encode_json (lib/arrow/json.c): every Arrow type Lance produces,
 * nulls, offsets, nesting, dictionaries and the float formatting edge cases, compared
 * byte for byte with the form docs/json-rows.md specifies. */
#include "lance.h"
#include "arrow_build.h"
#include <check.h>
#include "support/support.h"
#include <float.h>
#include <math.h>
#include <stdio.h>

/* The JSON body, or the error message (malloc'd either way); *rc_out the encoder's code. */
static char *encode(struct ArrowSchema *s, struct ArrowArray *a, int *rc_out) {
  struct lnc_error err = {0};
  char *out = tsup_json_try(s, a, &err);
  if (rc_out) *rc_out = out ? 0 : err.code;
  return out ? out : strdup(err.message);
}

/* One column "x" of length n; expected values v[0..n). */
static void check_vals_f(const char *file, int line, struct ArrowSchema *col, struct ArrowArray *arr,
                         int n, const char **v) {
  struct ArrowSchema *s;
  struct ArrowArray *a;
  tb_batch(1, &col, &arr, arr->length, &s, &a);
  char exp[8192];
  size_t k = (size_t)snprintf(exp, sizeof exp, "{\"num_rows\":%d,\"columns\":[\"%s\"],\"rows\":[", n,
                              col->name);
  for (int i = 0; i < n; i++)
    k += (size_t)snprintf(exp + k, sizeof exp - k, "%s{\"%s\":%s}", i ? "," : "", col->name, v[i]);
  snprintf(exp + k, sizeof exp - k, "]}");
  int rc;
  char *got = encode(s, a, &rc);
  ck_assert_msg(rc == 0 && strcmp(got, exp) == 0, "%s:%d\n got: %s\nwant: %s", file, line, got, exp);
  free(got);
}
#define CHECK_VALS(col, arr, ...)                                                    \
  do {                                                                               \
    const char *v_[] = {__VA_ARGS__};                                                \
    check_vals_f(__FILE__, __LINE__, col, arr, (int)(sizeof v_ / sizeof v_[0]), v_); \
  } while (0)

static void teardown(void) { tb_free_all(); }

/* lnc_json_str: every byte that is not part of valid UTF-8 becomes U+FFFD (RFC 3629). */
static void json_str_is(const char *in, size_t n, const char *want) {
  struct lnc_buf b = {0};
  ck_assert_int_eq(lnc_json_str(&b, in, n), 0);
  ck_assert_msg(b.len == strlen(want) && memcmp(b.data, want, b.len) == 0, "%.*s != %s", (int)b.len,
                (const char *)b.data, want);
  lnc_buf_free(&b);
}

START_TEST(test_json_str_utf8) {
  json_str_is("a\"b\\c\n", 6, "\"a\\\"b\\\\c\\n\"");
  json_str_is("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9, "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
  json_str_is("\xff", 1, "\"\\ufffd\"");                                  /* never valid */
  json_str_is("\xc0\xae", 2, "\"\\ufffd\\ufffd\"");                       /* overlong '.' */
  json_str_is("\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"");            /* a surrogate */
  json_str_is("\xf4\x90\x80\x80", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* past U+10FFFF */
  json_str_is("x\xe2\x82", 3, "\"x\\ufffd\\ufffd\"");                     /* cut short */
  ck_assert_int_eq(lnc_json_str(NULL, "x", 1), LNC_EINVAL);
}
END_TEST

START_TEST(test_envelope) {
  static const int32_t xs[] = {1, 2};
  static const int32_t offs[] = {0, 1, 1};
  static const char data[] = "a";
  struct ArrowSchema *cols[] = {tb_schema("i", "a", 0), tb_schema("u", "b\"q", 0)};
  struct ArrowArray *arrs[] = {tb_prim(2, xs), tb_var(2, 0, NULL, offs, data)};
  struct ArrowSchema *s;
  struct ArrowArray *a;
  tb_batch(2, cols, arrs, 2, &s, &a);
  char *got = encode(s, a, NULL);
  ck_assert_str_eq(got, "{\"num_rows\":2,\"columns\":[\"a\",\"b\\\"q\"],\"rows\":[{\"a\":1,\"b\\\"q\":\"a\"},{\"a\":2,\"b\\\"q\":\"\"}]}");
  free(got);
  /* zero rows, zero columns */
  tb_batch(0, cols, arrs, 0, &s, &a);
  got = encode(s, a, NULL);
  ck_assert_str_eq(got, "{\"num_rows\":0,\"columns\":[],\"rows\":[]}");
  free(got);
  /* batch-level offset */
  tb_batch(2, cols, arrs, 1, &s, &a);
  a->offset = 1;
  got = encode(s, a, NULL);
  ck_assert_str_eq(got, "{\"num_rows\":1,\"columns\":[\"a\",\"b\\\"q\"],\"rows\":[{\"a\":2,\"b\\\"q\":\"\"}]}");
  free(got);
}
END_TEST

START_TEST(test_ints) {
  static const int8_t i8[] = {-128, 127, 0};
  static const uint8_t u8[] = {255, 0, 7};
  static const int16_t i16[] = {-32768, 32767, 5};
  static const uint16_t u16[] = {65535, 0, 1};
  static const int32_t i32[] = {INT32_MIN, INT32_MAX, -1};
  static const uint32_t u32[] = {UINT32_MAX, 0, 10};
  static const int64_t i64[] = {INT64_MIN, INT64_MAX, -100};
  static const uint64_t u64[] = {UINT64_MAX, 0, 1000000000000ULL};
  static const uint8_t valid[] = {0x05}; /* 1, 0, 1 */
  CHECK_VALS(tb_schema("c", "x", 0), tb_prim(3, i8), "-128", "127", "0");
  CHECK_VALS(tb_schema("C", "x", 0), tb_prim(3, u8), "255", "0", "7");
  CHECK_VALS(tb_schema("s", "x", 0), tb_prim(3, i16), "-32768", "32767", "5");
  CHECK_VALS(tb_schema("S", "x", 0), tb_prim(3, u16), "65535", "0", "1");
  CHECK_VALS(tb_schema("i", "x", 0), tb_prim(3, i32), "-2147483648", "2147483647", "-1");
  CHECK_VALS(tb_schema("I", "x", 0), tb_prim(3, u32), "4294967295", "0", "10");
  CHECK_VALS(tb_schema("l", "x", 0), tb_prim(3, i64), "-9223372036854775808", "9223372036854775807", "-100");
  CHECK_VALS(tb_schema("L", "x", 0), tb_prim(3, u64), "18446744073709551615", "0", "1000000000000");
  CHECK_VALS(tb_schema("l", "x", 0), tb_primn(3, 1, valid, i64), "-9223372036854775808", "null", "-100");
  /* null_count -1 (unknown) with a bitmap */
  CHECK_VALS(tb_schema("l", "x", 0), tb_primn(3, -1, valid, i64), "-9223372036854775808", "null", "-100");
  /* offset into values and bitmap */
  struct ArrowArray *sl = tb_primn(2, 1, valid, i32);
  sl->offset = 1;
  CHECK_VALS(tb_schema("i", "x", 0), sl, "null", "-1");
  /* bitmap present but null_count 0: bitmap ignored */
  CHECK_VALS(tb_schema("i", "x", 0), tb_primn(3, 0, valid, i32), "-2147483648", "2147483647", "-1");
}
END_TEST

START_TEST(test_bool_null) {
  static const uint8_t bits[] = {0x0D, 0x01};  /* 1,0,1,1,0,0,0,0, 1 */
  static const uint8_t valid[] = {0xFB, 0x01}; /* all but index 2 */
  CHECK_VALS(tb_schema("b", "x", 0), tb_primn(9, 1, valid, bits), "true", "false", "null", "true",
             "false", "false", "false", "false", "true");
  struct ArrowArray *sl = tb_primn(3, 1, valid, bits);
  sl->offset = 7;
  CHECK_VALS(tb_schema("b", "x", 0), sl, "false", "true", "null");
  CHECK_VALS(tb_schema("n", "x", 0), tb_array(2, 2, 0, 0, NULL, NULL, NULL, 0), "null", "null");
}
END_TEST

/* lnc_encode_json_max stops once the body passes its bound, leaving out as it was: 4,096
 * booleans are 512 bytes of Arrow and 40 KB of JSON. */
START_TEST(test_json_max_len) {
  static uint8_t bits[512];
  memset(bits, 0x55, sizeof bits);
  struct ArrowSchema *col = tb_schema("b", "x", 0), *s;
  struct ArrowArray *arr = tb_primn(4096, 0, NULL, bits), *a;
  tb_batch(1, &col, &arr, 4096, &s, &a);
  struct lnc_buf out = {0};
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_json_str(&out, "p", 1), 0); /* something before: kept */
  size_t before = out.len;
  ck_assert_int_eq(lnc_encode_json_max(s, a, 0, &out, &err), 0);
  size_t whole = out.len - before;
  ck_assert_uint_gt(whole, 40000);
  out.len = before;
  ck_assert_int_eq(lnc_encode_json_max(s, a, whole, &out, &err), 0); /* exactly enough: the bound is inclusive */
  out.len = before;
  ck_assert_int_eq(lnc_encode_json_max(s, a, 4096, &out, &err), LNC_ELIMIT);
  ck_assert_msg(strstr(err.message, "passes 4096 bytes"), "%s", err.message);
  ck_assert_uint_eq(out.len, before);
  lnc_buf_free(&out);
}
END_TEST

START_TEST(test_float64) {
  static const double v[] = {0.1, 1.5, 100, 1e21, 1e-7, 123456789012345680000.0,
                             5e-324, -0.0, 0.0, 1e20, 1.5e-7, 0.000001,
                             0.1 + 0.2, -2.5, 1.7976931348623157e308, 2.2250738585072014e-308,
                             9007199254740993.0, 123.456, 1e-6 * 1.5, 4294967296.5};
  CHECK_VALS(tb_schema("g", "x", 0), tb_prim(20, v), "0.1", "1.5", "100", "1e+21", "1e-7",
             "123456789012345680000", "5e-324", "-0", "0", "100000000000000000000", "1.5e-7",
             "0.000001", "0.30000000000000004", "-2.5", "1.7976931348623157e+308",
             "2.2250738585072014e-308", "9007199254740992", "123.456", "0.0000015",
             "4294967296.5");
  static double sp[3];
  sp[0] = NAN;
  sp[1] = INFINITY;
  sp[2] = -INFINITY;
  CHECK_VALS(tb_schema("g", "x", 0), tb_prim(3, sp), "\"NaN\"", "\"Infinity\"", "\"-Infinity\"");
}
END_TEST

START_TEST(test_float32) {
  static const float v[] = {0.1f, FLT_MAX, 1e-7f, 123456789.0f, 16777216.0f, -0.0f, 1.4e-45f,
                            3.14159274f, 1e21f, 0.5f, 1e10f};
  CHECK_VALS(tb_schema("f", "x", 0), tb_prim(11, v), "0.1", "3.4028235e+38", "1e-7", "123456790",
             "16777216", "-0", "1e-45", "3.1415927", "1e+21", "0.5", "10000000000");
  static float sp[3];
  sp[0] = NAN;
  sp[1] = INFINITY;
  sp[2] = -INFINITY;
  CHECK_VALS(tb_schema("f", "x", 0), tb_prim(3, sp), "\"NaN\"", "\"Infinity\"", "\"-Infinity\"");
}
END_TEST

START_TEST(test_float16) {
  static const uint16_t v[] = {0x3C00, 0x3555, 0x7BFF, 0x0001, 0x2E66, 0xC000, 0x8000, 0x0000,
                               0x7C00, 0xFC00, 0x7E00, 0x3E00, 0x0400, 0x5640};
  CHECK_VALS(tb_schema("e", "x", 0), tb_prim(14, v), "1", "0.3333", "65500", "6e-8", "0.1", "-2",
             "-0", "0", "\"Infinity\"", "\"-Infinity\"", "\"NaN\"", "1.5", "0.00006104", "100");
}
END_TEST

START_TEST(test_strings) {
  static const int32_t offs[] = {0, 3, 3, 14, 16};
  static const char data[] = "abc"
                             "q\"\\\n\r\t\b\f\x01\x1f"
                             "z"
                             "\xc3\xa9";
  static const uint8_t valid[] = {0x0D}; /* index 1 null */
  CHECK_VALS(tb_schema("u", "x", 0), tb_var(4, 1, valid, offs, data), "\"abc\"", "null",
             "\"q\\\"\\\\\\n\\r\\t\\b\\f\\u0001\\u001fz\"", "\"\xc3\xa9\"");
  static const int64_t loffs[] = {0, 3, 3, 14, 16};
  struct ArrowArray *sl = tb_var(2, 1, valid, loffs, data);
  sl->offset = 1;
  sl->length = 2;
  CHECK_VALS(tb_schema("U", "x", 0), sl, "null", "\"q\\\"\\\\\\n\\r\\t\\b\\f\\u0001\\u001fz\"");
  /* binary: base64 */
  static const int32_t boffs[] = {0, 0, 1, 3, 6, 10};
  static const char bdata[] = "ffofoo\xff\xfe\x00\x01";
  CHECK_VALS(tb_schema("z", "x", 0), tb_var(5, 0, NULL, boffs, bdata), "\"\"", "\"Zg==\"",
             "\"Zm8=\"", "\"Zm9v\"", "\"//4AAQ==\"");
  static const int64_t lboffs[] = {0, 0, 1, 3, 6, 10};
  CHECK_VALS(tb_schema("Z", "x", 0), tb_var(5, 0, NULL, lboffs, bdata), "\"\"", "\"Zg==\"",
             "\"Zm8=\"", "\"Zm9v\"", "\"//4AAQ==\"");
  static const char fixed[] = "abcdef";
  struct ArrowArray *fx = tb_prim(2, fixed);
  fx->offset = 1;
  CHECK_VALS(tb_schema("w:2", "x", 0), fx, "\"Y2Q=\"", "\"ZWY=\"");
}
END_TEST

START_TEST(test_dates_times) {
  static const int32_t d32[] = {0, 19723, -1, -719528, -719529, 2932896, 2932897, 11016};
  CHECK_VALS(tb_schema("tdD", "x", 0), tb_prim(8, d32), "\"1970-01-01\"", "\"2024-01-01\"",
             "\"1969-12-31\"", "\"0000-01-01\"", "\"-000001-12-31\"", "\"9999-12-31\"",
             "\"+010000-01-01\"", "\"2000-02-29\"");
  static const int64_t d64[] = {86400000, 1, -1, 0};
  CHECK_VALS(tb_schema("tdm", "x", 0), tb_prim(4, d64), "\"1970-01-02\"",
             "\"1970-01-01T00:00:00.001Z\"", "\"1969-12-31T23:59:59.999Z\"", "\"1970-01-01\"");
  static const int64_t ts_s[] = {1704164645, -1};
  static const int64_t ts_ms[] = {1704164645123LL, 0};
  static const int64_t ts_us[] = {1704164645123456LL, -1};
  static const int64_t ts_ns[] = {1704164645123456789LL, 1};
  CHECK_VALS(tb_schema("tss:", "x", 0), tb_prim(2, ts_s), "\"2024-01-02T03:04:05Z\"",
             "\"1969-12-31T23:59:59Z\"");
  CHECK_VALS(tb_schema("tsm:UTC", "x", 0), tb_prim(2, ts_ms), "\"2024-01-02T03:04:05.123Z\"",
             "\"1970-01-01T00:00:00.000Z\"");
  CHECK_VALS(tb_schema("tsu:", "x", 0), tb_prim(2, ts_us), "\"2024-01-02T03:04:05.123456Z\"",
             "\"1969-12-31T23:59:59.999999Z\"");
  CHECK_VALS(tb_schema("tsn:Etc/UTC", "x", 0), tb_prim(2, ts_ns),
             "\"2024-01-02T03:04:05.123456789Z\"", "\"1970-01-01T00:00:00.000000001Z\"");
  CHECK_VALS(tb_schema("tss:+05:30", "x", 0), tb_prim(2, ts_s), "\"2024-01-02T08:34:05+05:30\"",
             "\"1970-01-01T05:29:59+05:30\"");
  CHECK_VALS(tb_schema("tss:-08:00", "x", 0), tb_prim(1, ts_s), "\"2024-01-01T19:04:05-08:00\"");
  CHECK_VALS(tb_schema("tss:+00:00", "x", 0), tb_prim(1, ts_s), "\"2024-01-02T03:04:05Z\"");
  CHECK_VALS(tb_schema("tsu:America/New_York", "x", 0), tb_prim(1, ts_us),
             "\"2024-01-02T03:04:05.123456Z\"");
  static const int32_t t_s[] = {3661, 0, 86399};
  static const int32_t t_ms[] = {3661001};
  static const int64_t t_us[] = {3661000001LL};
  static const int64_t t_ns[] = {86399999999999LL};
  CHECK_VALS(tb_schema("tts", "x", 0), tb_prim(3, t_s), "\"01:01:01\"", "\"00:00:00\"", "\"23:59:59\"");
  CHECK_VALS(tb_schema("ttm", "x", 0), tb_prim(1, t_ms), "\"01:01:01.001\"");
  CHECK_VALS(tb_schema("ttu", "x", 0), tb_prim(1, t_us), "\"01:01:01.000001\"");
  CHECK_VALS(tb_schema("ttn", "x", 0), tb_prim(1, t_ns), "\"23:59:59.999999999\"");
  static const int64_t dur[] = {-5, 1000, INT64_MAX};
  CHECK_VALS(tb_schema("tDs", "x", 0), tb_prim(3, dur), "-5", "1000", "9223372036854775807");
  CHECK_VALS(tb_schema("tDn", "x", 0), tb_prim(1, dur), "-5");
}
END_TEST

START_TEST(test_decimals) {
  /* int128 little endian: lo, hi */
  static const int64_t d128[] = {12345, 0, -5, -1, 7, 0, 0, 0, -1, -1, 0, INT64_MIN};
  CHECK_VALS(tb_schema("d:10,2", "x", 0), tb_prim(6, d128), "\"123.45\"", "\"-0.05\"", "\"0.07\"",
             "\"0.00\"", "\"-0.01\"", "\"-1701411834604692317316873037158841057.28\"");
  CHECK_VALS(tb_schema("d:10,0", "x", 0), tb_prim(3, d128), "\"12345\"", "\"-5\"", "\"7\"");
  CHECK_VALS(tb_schema("d:10,-2", "x", 0), tb_prim(4, d128), "\"1234500\"", "\"-500\"", "\"700\"", "\"0\"");
  CHECK_VALS(tb_schema("d:38,3,128", "x", 0), tb_prim(1, d128), "\"12.345\"");
  /* decimal256: 2^200 + 1 and -1 */
  static uint64_t d256[8];
  d256[0] = 1;
  d256[3] = 1ULL << 8;
  for (int i = 4; i < 8; i++) d256[i] = UINT64_MAX;
  CHECK_VALS(tb_schema("d:76,5,256", "x", 0), tb_prim(2, d256),
             "\"16069380442589902755419620923411626025222029937827928353.01377\"", "\"-0.00001\"");
}
END_TEST

/* lnc_decimal_format at the ends of the scale's range (the protobuf answer's decimal text was
 * written into a 64-byte stack array: a file's scale of 64 or more overflowed it), and the
 * range enforced where a type is parsed. */
START_TEST(test_decimal_format_bounds) {
  uint64_t v256[4] = {UINT64_MAX, UINT64_MAX, UINT64_MAX, INT64_MAX}; /* 2^255 - 1: 77 digits */
  uint64_t m256[4] = {0, 0, 0, (uint64_t)INT64_MIN};                  /* -2^255 */
  char out[LNC_DECIMAL_STR_MAX];
  int n = lnc_decimal_format(v256, 256, LNC_DECIMAL_MAX_SCALE, out, sizeof out);
  ck_assert_int_eq(n, 2 + LNC_DECIMAL_MAX_SCALE);
  ck_assert(!strncmp(out, "0.00000000000000000000000000000000000000000000000000578960446186", 64));
  n = lnc_decimal_format(m256, 256, LNC_DECIMAL_MIN_SCALE, out, sizeof out);
  ck_assert_int_eq(n, 1 + 77 - LNC_DECIMAL_MIN_SCALE);
  ck_assert(!strncmp(out, "-578960446186580977117854925043439539266349923328202820197287920039565648199680", 79));
  int64_t one[2] = {-1, -1};
  n = lnc_decimal_format(one, 128, 99, out, sizeof out);
  ck_assert_int_eq(n, 1 + 2 + 99);
  ck_assert_int_eq(out[n - 1], '1');
  ck_assert_int_eq(lnc_decimal_format(one, 128, LNC_DECIMAL_MAX_SCALE + 1, out, sizeof out), -1);
  ck_assert_int_eq(lnc_decimal_format(one, 128, 2, out, LNC_DECIMAL_STR_MAX - 1), -1);
  ck_assert_int_eq(lnc_decimal_format(one, 96, 2, out, sizeof out), -1);
  struct lnc_atype_info t;
  ck_assert_int_eq(lnc_arrow_parse_format("d:10,127", &t, NULL), 0);
  ck_assert_int_eq(lnc_arrow_parse_format("d:10,-128", &t, NULL), 0);
  ck_assert_int_eq(lnc_arrow_parse_format("d:10,128", &t, NULL), LNC_EUNSUPPORTED);
  ck_assert_int_eq(lnc_arrow_parse_format("d:10,-129,256", &t, NULL), LNC_EUNSUPPORTED);
}
END_TEST

START_TEST(test_nested) {
  /* list<int32>: [[1,2],null,[],[3]] with child offset 1 */
  static const int32_t items[] = {99, 1, 2, 3};
  static const int32_t loffs[] = {0, 2, 2, 2, 3};
  static const uint8_t lvalid[] = {0x0D};
  struct ArrowArray *child = tb_prim(3, items);
  child->offset = 1;
  struct ArrowSchema *ls = tb_schema("+l", "x", 1, tb_schema("i", "item", 0));
  CHECK_VALS(ls, tb_array(4, 1, 0, 2, lvalid, loffs, NULL, 1, child), "[1,2]", "null", "[]", "[3]");
  /* sliced list */
  struct ArrowArray *sl = tb_array(2, 1, 0, 2, lvalid, loffs, NULL, 1, child);
  sl->offset = 2;
  CHECK_VALS(ls, sl, "[]", "[3]");
  static const int64_t Loffs[] = {0, 2, 2, 2, 3};
  CHECK_VALS(tb_schema("+L", "x", 1, tb_schema("i", "item", 0)),
             tb_array(4, 1, 0, 2, lvalid, Loffs, NULL, 1, child), "[1,2]", "null", "[]", "[3]");
  /* fixed size list<float32, 2> with a null item and an offset */
  static const float fv[] = {0, 0, 1.5f, 2.5f, 3.5f, 0};
  static const uint8_t fvalid[] = {0x37}; /* index 3 null */
  struct ArrowArray *fc = tb_primn(6, 1, fvalid, fv);
  struct ArrowArray *fl = tb_array(2, 0, 1, 1, NULL, NULL, NULL, 1, fc);
  CHECK_VALS(tb_schema("+w:2", "x", 1, tb_schema("f", "item", 0)), fl, "[1.5,null]", "[3.5,0]");
  /* struct<a: int32, b: utf8> with a null struct, parent offset 1 */
  static const int32_t sa[] = {10, 20, 30};
  static const int32_t soffs[] = {0, 1, 2, 3};
  static const char sdata[] = "pqr";
  static const uint8_t svalid[] = {0x05}; /* index 1 null */
  struct ArrowSchema *ss = tb_schema("+s", "x", 2, tb_schema("i", "a", 0), tb_schema("u", "b", 0));
  struct ArrowArray *sarr = tb_array(2, 1, 1, 1, svalid, NULL, NULL, 2, tb_prim(3, sa),
                                     tb_var(3, 0, NULL, soffs, sdata));
  CHECK_VALS(ss, sarr, "null", "{\"a\":30,\"b\":\"r\"}");
  /* list<struct<a: int32, b: utf8>> */
  static const int32_t lso[] = {0, 2, 3};
  struct ArrowArray *inner = tb_array(3, 1, 0, 1, svalid, NULL, NULL, 2, tb_prim(3, sa),
                                      tb_var(3, 0, NULL, soffs, sdata));
  CHECK_VALS(tb_schema("+l", "x", 1, ss), tb_array(2, 0, 0, 2, NULL, lso, NULL, 1, inner),
             "[{\"a\":10,\"b\":\"p\"},null]", "[{\"a\":30,\"b\":\"r\"}]");
}
END_TEST

START_TEST(test_dictionary) {
  static const int8_t idx[] = {1, 0, 1, 2};
  static const uint8_t valid[] = {0x0B}; /* index 2 null */
  static const int32_t offs[] = {0, 3, 6, 6};
  static const char data[] = "redblu";
  static const uint8_t dvalid[] = {0x03}; /* dictionary entry 2 null */
  struct ArrowSchema *s = tb_schema("c", "x", 0);
  s->dictionary = tb_schema("u", "", 0);
  struct ArrowArray *a = tb_primn(4, 1, valid, idx);
  a->dictionary = tb_var(3, 1, dvalid, offs, data);
  CHECK_VALS(s, a, "\"blu\"", "\"red\"", "null", "null");
  a->dictionary->offset = 1; /* dictionary offsets respected too */
  a->dictionary->length = 2;
  a->length = 2;
  CHECK_VALS(s, a, "null", "\"blu\"");
}
END_TEST

START_TEST(test_errors) {
  static const int32_t v[] = {1};
  struct ArrowSchema *col = tb_schema("tiM", "x", 0);
  struct ArrowArray *arr = tb_prim(1, v);
  struct ArrowSchema *s;
  struct ArrowArray *a;
  tb_batch(1, &col, &arr, 1, &s, &a);
  struct lnc_buf b = {0};
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_encode_json(s, a, &b, &err), LNC_EUNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(err.message, "tiM"));
  ck_assert_uint_eq(b.len, 0);
  /* dictionary index out of range */
  static const int8_t idx[] = {5};
  static const int32_t offs[] = {0, 1};
  col = tb_schema("c", "x", 0);
  col->dictionary = tb_schema("u", "", 0);
  arr = tb_prim(1, idx);
  arr->dictionary = tb_var(1, 0, NULL, offs, "a");
  tb_batch(1, &col, &arr, 1, &s, &a);
  ck_assert_int_ne(lnc_encode_json(s, a, &b, &err), 0);
  ck_assert_uint_eq(b.len, 0);
  /* missing buffers */
  col = tb_schema("i", "x", 0);
  arr = tb_prim(1, NULL);
  tb_batch(1, &col, &arr, 1, &s, &a);
  ck_assert_int_eq(lnc_encode_json(s, a, &b, &err), LNC_EINVAL);
  lnc_buf_free(&b);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("json");
  TCase *tc = tcase_create("encode");
  tcase_add_checked_fixture(tc, NULL, teardown);
  tcase_add_test(tc, test_envelope);
  tcase_add_test(tc, test_json_str_utf8);
  tcase_add_test(tc, test_ints);
  tcase_add_test(tc, test_bool_null);
  tcase_add_test(tc, test_json_max_len);
  tcase_add_test(tc, test_float64);
  tcase_add_test(tc, test_float32);
  tcase_add_test(tc, test_float16);
  tcase_add_test(tc, test_strings);
  tcase_add_test(tc, test_dates_times);
  tcase_add_test(tc, test_decimals);
  tcase_add_test(tc, test_decimal_format_bounds);
  tcase_add_test(tc, test_nested);
  tcase_add_test(tc, test_dictionary);
  tcase_add_test(tc, test_errors);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return tsup_run(suite());
}
