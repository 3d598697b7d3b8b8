/* Unit tests for lnc_encode_arrow_ipc (lib/arrow/ipc.c): message framing, 8-byte alignment,
 * end-of-stream marker, schema and record batch metadata, rebasing of sliced input, and
 * dictionary batches. With IPC_OUT_DIR set, also writes <name>.arrows (IPC stream),
 * <name>.json (lnc_encode_json of the same batch) and <name>.schema.json for
 * tests/integration/ipc_roundtrip.mjs, which reads them back with apache-arrow. */
#include "lance.h"
#include "util/buf.h"
#include "arrow_build.h"
#include <check.h>
#include "support/support.h"
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>

/* ---- a tiny flatbuffer reader for checking our own output ------------------------------- */
static uint32_t rd32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static int64_t rd64(const uint8_t *p) {
  int64_t v;
  memcpy(&v, p, 8);
  return v;
}
static uint16_t rd16(const uint8_t *p) {
  uint16_t v;
  memcpy(&v, p, 2);
  return v;
}

static const uint8_t *fb_field(const uint8_t *table, int id) {
  const uint8_t *vt = table - (int32_t)rd32(table);
  uint16_t vtsize = rd16(vt);
  if ((size_t)(4 + 2 * id) >= vtsize) return NULL;
  uint16_t off = rd16(vt + 4 + 2 * id);
  return off ? table + off : NULL;
}
static const uint8_t *fb_deref(const uint8_t *p) { return p + rd32(p); }
static const uint8_t *fb_table_at(const uint8_t *table, int id) {
  const uint8_t *f = fb_field(table, id);
  return f ? fb_deref(f) : NULL;
}
static int64_t fb_int(const uint8_t *table, int id, int size, int64_t dflt) {
  const uint8_t *f = fb_field(table, id);
  if (!f) return dflt;
  switch (size) {
  case 1: return *f;
  case 2: return (int16_t)rd16(f);
  case 4: return (int32_t)rd32(f);
  default: return rd64(f);
  }
}
static uint32_t fb_vec_len(const uint8_t *vec) { return rd32(vec); }
static const uint8_t *fb_vec_table(const uint8_t *vec, uint32_t i) { return fb_deref(vec + 4 + 4 * i); }
static char *fb_str(const uint8_t *s) { return strndup((const char *)s + 4, rd32(s)); }

struct msg {
  int header_type;
  const uint8_t *header;
  const uint8_t *body;
  int64_t body_len;
};

/* Splits an IPC stream into messages; checks framing, alignment and the EOS marker. */
static int parse_stream(const uint8_t *d, size_t n, struct msg *msgs, int max) {
  size_t pos = 0;
  int k = 0;
  for (;;) {
    ck_assert_uint_le(pos + 8, n);
    ck_assert_uint_eq(pos % 8, 0);
    ck_assert_uint_eq(rd32(d + pos), 0xFFFFFFFFu);
    uint32_t mlen = rd32(d + pos + 4);
    if (mlen == 0) {
      ck_assert_uint_eq(pos + 8, n); /* EOS is last */
      return k;
    }
    ck_assert_uint_eq((8 + mlen) % 8, 0);
    ck_assert_uint_le(pos + 8 + mlen, n);
    const uint8_t *meta = d + pos + 8;
    const uint8_t *m = fb_deref(meta);
    ck_assert_int_eq(fb_int(m, 0, 2, 0), 4); /* V5 */
    ck_assert_int_lt(k, max);
    msgs[k].header_type = (int)fb_int(m, 1, 1, 0);
    msgs[k].header = fb_table_at(m, 2);
    ck_assert_ptr_nonnull(msgs[k].header);
    msgs[k].body_len = fb_int(m, 3, 8, 0);
    ck_assert_int_eq(msgs[k].body_len % 8, 0);
    msgs[k].body = d + pos + 8 + mlen;
    ck_assert_uint_eq(((uintptr_t)(msgs[k].body - d)) % 8, 0);
    pos += 8 + mlen + (size_t)msgs[k].body_len;
    ck_assert_uint_le(pos, n);
    k++;
  }
}

/* Buffer i of a RecordBatch table: pointer into the body and length. */
static const uint8_t *rb_buffer(const struct msg *m, const uint8_t *rb, uint32_t i, int64_t *len) {
  const uint8_t *bufs = fb_table_at(rb, 2);
  ck_assert_uint_lt(i, fb_vec_len(bufs));
  const uint8_t *b = bufs + 4 + 16 * i;
  ck_assert_uint_eq((uintptr_t)b % 8, 0); /* struct vectors 8-aligned */
  int64_t off = rd64(b);
  *len = rd64(b + 8);
  ck_assert_int_eq(off % 8, 0);
  ck_assert_int_le(off + *len, m->body_len);
  return m->body + off;
}
static void rb_node(const uint8_t *rb, uint32_t i, int64_t *len, int64_t *nulls) {
  const uint8_t *nodes = fb_table_at(rb, 1);
  ck_assert_uint_lt(i, fb_vec_len(nodes));
  *len = rd64(nodes + 4 + 16 * i);
  *nulls = rd64(nodes + 4 + 16 * i + 8);
}

static struct lnc_buf encode_ok(struct ArrowSchema *s, struct ArrowArray *a) {
  struct lnc_buf b = {0};
  struct lnc_error err = {0};
  int rc = lnc_encode_arrow_ipc(s, a, &b, &err);
  ck_assert_msg(rc == 0, "encode: %s", err.message);
  return b;
}

/* ---- batches shared by the structural tests and the round-trip files ----------------------- */
typedef void (*batch_fn)(struct ArrowSchema **s, struct ArrowArray **a);

static void batch_primitives(struct ArrowSchema **s, struct ArrowArray **a) {
  static const int8_t i8[] = {9, -128, 127, 0, 1, 2};
  static const uint8_t u8[] = {9, 255, 0, 7, 1, 2};
  static const int16_t i16[] = {9, -32768, 32767, 5, 1, 2};
  static const uint16_t u16[] = {9, 65535, 0, 1, 1, 2};
  static const int32_t i32[] = {9, INT32_MIN, INT32_MAX, -1, 1, 2};
  static const uint32_t u32[] = {9, UINT32_MAX, 0, 10, 1, 2};
  static const int64_t i64[] = {9, INT64_MIN, INT64_MAX, -100, 1, 2};
  static const uint64_t u64[] = {9, UINT64_MAX, 0, 1000000000000ULL, 1, 2};
  static const uint16_t f16[] = {0, 0x3C00, 0x3555, 0x7BFF, 0x8000, 0x0001};
  static const float f32[] = {0, 0.1f, FLT_MAX, 1e-7f, -0.0f, 1.4e-45f};
  static double f64[6];
  f64[0] = 0;
  f64[1] = 0.1;
  f64[2] = 1e21;
  f64[3] = 123456789012345680000.0;
  f64[4] = 5e-324;
  f64[5] = NAN;
  static const uint8_t bits[] = {0x2D};  /* 1,0,1,1,0,1 */
  static const uint8_t valid[] = {0x3B}; /* index 2 null (1,1,0,1,1,1) */
  /* every column sliced by one (offset 1), length 5, one null at logical index 1 */
  struct ArrowSchema *cols[13] = {
      tb_schema("c", "i8", 0), tb_schema("C", "u8", 0), tb_schema("s", "i16", 0),
      tb_schema("S", "u16", 0), tb_schema("i", "i32", 0), tb_schema("I", "u32", 0),
      tb_schema("l", "i64", 0), tb_schema("L", "u64", 0), tb_schema("e", "f16", 0),
      tb_schema("f", "f32", 0), tb_schema("g", "f64", 0), tb_schema("b", "bool", 0),
      tb_schema("n", "nul", 0)};
  cols[0]->flags = 0; /* one non-nullable field */
  const void *vals[12] = {i8, u8, i16, u16, i32, u32, i64, u64, f16, f32, f64, bits};
  struct ArrowArray *arrs[13];
  for (int i = 0; i < 12; i++) {
    arrs[i] = tb_primn(5, i == 0 ? 0 : 1, i == 0 ? NULL : valid, vals[i]);
    arrs[i]->offset = 1;
  }
  arrs[12] = tb_array(5, 5, 0, 0, NULL, NULL, NULL, 0);
  tb_batch(13, cols, arrs, 5, s, a);
}

static void batch_strings(struct ArrowSchema **s, struct ArrowArray **a) {
  static const int32_t offs[] = {0, 1, 4, 4, 14, 16, 19};
  static const int64_t loffs[] = {0, 1, 4, 4, 14, 16, 19};
  static const char data[] = "Xabc"
                             "q\"\\\n\t\x01"
                             "zz\x7f"
                             "\xc3\xa9"
                             "end";
  static const int32_t boffs[] = {5, 5, 6, 8, 11, 15, 15};
  static const char bdata[] = "_____ffofoo\xff\xfe\x00\x01";
  static const int64_t lboffs[] = {5, 5, 6, 8, 11, 15, 15};
  static const char fixed[] = "..abcdefghij";
  static const uint8_t valid[] = {0x3B}; /* logical index 1 (physical 2) null */
  struct ArrowSchema *cols[5] = {tb_schema("u", "utf8", 0), tb_schema("U", "large_utf8", 0),
                                 tb_schema("z", "binary", 0), tb_schema("Z", "large_binary", 0),
                                 tb_schema("w:2", "fixed2", 0)};
  struct ArrowArray *arrs[5] = {tb_var(5, 1, valid, offs, data), tb_var(5, 1, valid, loffs, data),
                                tb_var(5, 1, valid, boffs, bdata),
                                tb_var(5, 0, NULL, lboffs, bdata), tb_primn(5, 1, valid, fixed)};
  for (int i = 0; i < 5; i++) arrs[i]->offset = 1;
  tb_batch(5, cols, arrs, 5, s, a);
}

static void batch_temporal(struct ArrowSchema **s, struct ArrowArray **a) {
  static const int32_t d32[] = {0, 19723, -1, -719529, 2932897};
  static const int64_t d64[] = {86400000, 1, -1, 0, 1704164645123LL};
  static const int32_t t32s[] = {3661, 0, 86399, 1, 2};
  static const int32_t t32m[] = {3661001, 0, 86399999, 1, 2};
  static const int64_t t64u[] = {3661000001LL, 0, 86399999999LL, 1, 2};
  static const int64_t t64n[] = {86399999999999LL, 0, 1, 2, 3};
  static const int64_t ts[] = {1704164645, -1, 0, 253402300800LL, -62167219201LL};
  static const int64_t tsn[] = {1704164645123456789LL, -1, 0, 1, INT64_MAX};
  static const int64_t dur[] = {-5, 1000, INT64_MAX, INT64_MIN, 0};
  static const uint8_t valid[] = {0x1D}; /* index 1 null */
  struct ArrowSchema *cols[] = {
      tb_schema("tdD", "date32", 0), tb_schema("tdm", "date64", 0), tb_schema("tts", "time_s", 0),
      tb_schema("ttm", "time_ms", 0), tb_schema("ttu", "time_us", 0), tb_schema("ttn", "time_ns", 0),
      tb_schema("tss:", "ts_s", 0), tb_schema("tsm:UTC", "ts_ms_utc", 0),
      tb_schema("tsu:+05:30", "ts_us_off", 0), tb_schema("tsn:America/New_York", "ts_ns_ny", 0),
      tb_schema("tss:-08:00", "ts_s_neg", 0), tb_schema("tDs", "dur_s", 0),
      tb_schema("tDm", "dur_ms", 0), tb_schema("tDu", "dur_us", 0), tb_schema("tDn", "dur_ns", 0)};
  const void *vals[] = {d32, d64, t32s, t32m, t64u, t64n, ts, ts, tsn, tsn, ts, dur, dur, dur, dur};
  enum { N = sizeof cols / sizeof cols[0] };
  struct ArrowArray *arrs[N];
  for (int i = 0; i < N; i++) arrs[i] = tb_primn(5, 1, valid, vals[i]);
  tb_batch(N, cols, arrs, 5, s, a);
}

static void batch_decimal(struct ArrowSchema **s, struct ArrowArray **a) {
  static const int64_t d128[] = {12345, 0, -5, -1, 0, 0, 0, INT64_MIN, 99, 0};
  static uint64_t d256[20];
  d256[0] = 1;
  d256[3] = 1ULL << 8;                              /* 2^200 + 1 */
  for (int i = 4; i < 8; i++) d256[i] = UINT64_MAX; /* -1 */
  d256[12] = 123;                                   /* row 3: 123 */
  static const uint8_t valid[] = {0x1B};            /* index 2 null */
  struct ArrowSchema *cols[] = {tb_schema("d:10,2", "dec", 0), tb_schema("d:38,-2", "dec_neg", 0),
                                tb_schema("d:76,5,256", "dec256", 0)};
  struct ArrowArray *arrs[] = {tb_primn(5, 1, valid, d128), tb_primn(5, 1, valid, d128),
                               tb_primn(5, 1, valid, d256)};
  tb_batch(3, cols, arrs, 5, s, a);
}

static void batch_nested(struct ArrowSchema **s, struct ArrowArray **a) {
  /* list<int32>, sliced by one, child with its own offset */
  static const int32_t items[] = {99, 1, 2, 3, 4, 5};
  static const int32_t loffs[] = {0, 2, 2, 2, 3, 5};
  static const uint8_t lvalid[] = {0x1D}; /* index 1 null */
  struct ArrowArray *child = tb_prim(5, items);
  child->offset = 1;
  struct ArrowSchema *ls = tb_schema("+l", "list", 1, tb_schema("i", "item", 0));
  struct ArrowArray *la = tb_array(4, 1, 1, 2, lvalid, loffs, NULL, 1, child);
  /* fixed_size_list<float32, 2>, sliced */
  static const float fv[] = {0, 0, 1.5f, 2.5f, 3.5f, 0, 7, 8, 9, 10};
  static const uint8_t fvalid[] = {0xF7, 0x03}; /* index 3 null */
  struct ArrowSchema *fs = tb_schema("+w:2", "fsl", 1, tb_schema_f("f", "item", 0, 0));
  fs->children[0]->flags = ARROW_FLAG_NULLABLE;
  struct ArrowArray *fa = tb_array(4, 0, 1, 1, NULL, NULL, NULL, 1, tb_primn(10, 1, fvalid, fv));
  /* struct<a: int32, b: utf8 (not nullable)> with a null row, sliced */
  static const int32_t sa[] = {10, 20, 30, 40, 50};
  static const int32_t soffs[] = {0, 1, 2, 3, 4, 5};
  static const char sdata[] = "pqrst";
  static const uint8_t svalid[] = {0x1B}; /* index 2 null */
  struct ArrowSchema *ss = tb_schema("+s", "st", 2, tb_schema("i", "a", 0), tb_schema_f("u", "b", 0, 0));
  struct ArrowArray *sarr = tb_array(4, 1, 1, 1, svalid, NULL, NULL, 2, tb_prim(5, sa),
                                     tb_var(5, 0, NULL, soffs, sdata));
  /* list<struct<a, b>> */
  static const int32_t lso[] = {0, 2, 3, 3, 5};
  struct ArrowSchema *ss2 = tb_schema("+s", "item", 2, tb_schema("i", "a", 0), tb_schema_f("u", "b", 0, 0));
  struct ArrowArray *inner = tb_array(5, 1, 0, 1, svalid, NULL, NULL, 2, tb_prim(5, sa),
                                      tb_var(5, 0, NULL, soffs, sdata));
  struct ArrowSchema *lss = tb_schema("+l", "list_struct", 1, ss2);
  struct ArrowArray *lsa = tb_array(4, 0, 0, 2, NULL, lso, NULL, 1, inner);
  struct ArrowSchema *cols[] = {ls, fs, ss, lss};
  struct ArrowArray *arrs[] = {la, fa, sarr, lsa};
  tb_batch(4, cols, arrs, 4, s, a);
}

static void batch_dict(struct ArrowSchema **s, struct ArrowArray **a) {
  static const int8_t idx[] = {0, 1, 0, 1, 2, 2};
  static const uint8_t valid[] = {0x37}; /* index 3 null */
  static const int32_t offs[] = {0, 3, 6, 6};
  static const char data[] = "redblu";
  static const uint8_t dvalid[] = {0x03}; /* entry 2 null */
  struct ArrowSchema *c0 = tb_schema("c", "color", 0);
  c0->dictionary = tb_schema_f("u", "", 0, 0);
  struct ArrowArray *a0 = tb_primn(5, 1, valid, idx);
  a0->offset = 1;
  a0->dictionary = tb_var(3, 1, dvalid, offs, data);
  /* a second dictionary column (int32 indices into int64 values), inside a list */
  static const int32_t idx2[] = {1, 0, 1, 1};
  static const int64_t dv[] = {100, -7};
  static const int32_t lo[] = {0, 1, 3, 3, 4, 4};
  struct ArrowSchema *it = tb_schema("i", "item", 0);
  it->dictionary = tb_schema_f("l", "", 0, 0);
  struct ArrowArray *ia = tb_prim(4, idx2);
  ia->dictionary = tb_prim(2, dv);
  struct ArrowSchema *c1 = tb_schema("+l", "codes", 1, it);
  struct ArrowArray *a1 = tb_array(5, 0, 0, 2, NULL, lo, NULL, 1, ia);
  struct ArrowSchema *cols[] = {c0, c1};
  struct ArrowArray *arrs[] = {a0, a1};
  tb_batch(2, cols, arrs, 5, s, a);
}

static void batch_empty(struct ArrowSchema **s, struct ArrowArray **a) {
  struct ArrowSchema *cols[] = {tb_schema("i", "x", 0), tb_schema("u", "y", 0),
                                tb_schema("+l", "z", 1, tb_schema("g", "item", 0))};
  struct ArrowArray *arrs[] = {tb_prim(0, NULL), tb_var(0, 0, NULL, NULL, NULL),
                               tb_array(0, 0, 0, 2, NULL, NULL, NULL, 1, tb_prim(0, NULL))};
  tb_batch(3, cols, arrs, 0, s, a);
}

static const struct {
  const char *name;
  batch_fn fn;
} BATCHES[] = {
    {"primitives", batch_primitives},
    {"strings", batch_strings},
    {"temporal", batch_temporal},
    {"decimal", batch_decimal},
    {"nested", batch_nested},
    {"dict", batch_dict},
    {"empty", batch_empty}};

static void teardown(void) { tb_free_all(); }

/* ---- structural tests --------------------------------------------------------------------- */
START_TEST(test_framing) {
  for (size_t t = 0; t < sizeof BATCHES / sizeof BATCHES[0]; t++) {
    struct ArrowSchema *s;
    struct ArrowArray *a;
    BATCHES[t].fn(&s, &a);
    struct lnc_buf b = encode_ok(s, a);
    struct msg m[8];
    int n = parse_stream(b.data, b.len, m, 8);
    ck_assert_int_ge(n, 2);
    ck_assert_int_eq(m[0].header_type, 1); /* Schema */
    ck_assert_int_eq(m[0].body_len, 0);
    ck_assert_int_eq(m[n - 1].header_type, 3); /* RecordBatch */
    for (int i = 1; i < n - 1; i++) ck_assert_int_eq(m[i].header_type, 2);
    ck_assert_int_eq(n - 2, strcmp(BATCHES[t].name, "dict") == 0 ? 2 : 0);
    const uint8_t *fields = fb_table_at(m[0].header, 1);
    ck_assert_uint_eq(fb_vec_len(fields), (uint32_t)s->n_children);
    ck_assert_int_eq(fb_int(m[n - 1].header, 0, 8, -1), a->length);
    /* every buffer inside the body, 8-aligned */
    const uint8_t *bufs = fb_table_at(m[n - 1].header, 2);
    for (uint32_t i = 0; i < fb_vec_len(bufs); i++) {
      int64_t len;
      rb_buffer(&m[n - 1], m[n - 1].header, i, &len);
    }
    lnc_buf_free(&b);
  }
}
END_TEST

START_TEST(test_appends) {
  /* output is appended to whatever the buffer holds */
  struct ArrowSchema *s;
  struct ArrowArray *a;
  batch_primitives(&s, &a);
  struct lnc_buf b = {0};
  struct lnc_error err;
  lnc_buf_append(&b, "12345678", 8);
  ck_assert_int_eq(lnc_encode_arrow_ipc(s, a, &b, &err), 0);
  ck_assert(memcmp(b.data, "12345678", 8) == 0);
  struct msg m[4];
  ck_assert_int_eq(parse_stream(b.data + 8, b.len - 8, m, 4), 2);
  lnc_buf_free(&b);
}
END_TEST

START_TEST(test_schema_fields) {
  struct ArrowSchema *s;
  struct ArrowArray *a;
  batch_temporal(&s, &a);
  struct lnc_buf b = encode_ok(s, a);
  struct msg m[4];
  parse_stream(b.data, b.len, m, 4);
  const uint8_t *fields = fb_table_at(m[0].header, 1);
  /* field 8: ts_us_off — Timestamp(MICROSECOND, "+05:30") */
  const uint8_t *f = fb_vec_table(fields, 8);
  char *name = fb_str(fb_table_at(f, 0));
  ck_assert_str_eq(name, "ts_us_off");
  free(name);
  ck_assert_int_eq(fb_int(f, 1, 1, 0), 1);
  ck_assert_int_eq(fb_int(f, 2, 1, 0), 10);
  const uint8_t *ty = fb_table_at(f, 3);
  ck_assert_int_eq(fb_int(ty, 0, 2, -1), 2);
  char *tz = fb_str(fb_table_at(ty, 1));
  ck_assert_str_eq(tz, "+05:30");
  free(tz);
  /* field 6: ts_s without zone: no timezone string */
  ty = fb_table_at(fb_vec_table(fields, 6), 3);
  ck_assert_ptr_null(fb_field(ty, 1));
  /* field 3: time_ms → Time(MILLISECOND, 32) */
  f = fb_vec_table(fields, 3);
  ck_assert_int_eq(fb_int(f, 2, 1, 0), 9);
  ty = fb_table_at(f, 3);
  ck_assert_int_eq(fb_int(ty, 0, 2, -1), 1);
  ck_assert_int_eq(fb_int(ty, 1, 4, -1), 32);
  lnc_buf_free(&b);

  batch_decimal(&s, &a);
  b = encode_ok(s, a);
  parse_stream(b.data, b.len, m, 4);
  fields = fb_table_at(m[0].header, 1);
  ty = fb_table_at(fb_vec_table(fields, 2), 3);
  ck_assert_int_eq(fb_int(fb_vec_table(fields, 2), 2, 1, 0), 7);
  ck_assert_int_eq(fb_int(ty, 0, 4, 0), 76);
  ck_assert_int_eq(fb_int(ty, 1, 4, 0), 5);
  ck_assert_int_eq(fb_int(ty, 2, 4, 0), 256);
  ty = fb_table_at(fb_vec_table(fields, 1), 3);
  ck_assert_int_eq(fb_int(ty, 1, 4, 0), -2);
  ck_assert_int_eq(fb_int(ty, 2, 4, 0), 128);
  lnc_buf_free(&b);

  batch_nested(&s, &a);
  b = encode_ok(s, a);
  parse_stream(b.data, b.len, m, 4);
  fields = fb_table_at(m[0].header, 1);
  f = fb_vec_table(fields, 2); /* struct st */
  ck_assert_int_eq(fb_int(f, 2, 1, 0), 13);
  const uint8_t *ch = fb_table_at(f, 5);
  ck_assert_uint_eq(fb_vec_len(ch), 2);
  ck_assert_int_eq(fb_int(fb_vec_table(ch, 1), 1, 1, 0), 0); /* b not nullable */
  f = fb_vec_table(fields, 1);                               /* fixed size list of 2 */
  ck_assert_int_eq(fb_int(f, 2, 1, 0), 16);
  ck_assert_int_eq(fb_int(fb_table_at(f, 3), 0, 4, 0), 2);
  lnc_buf_free(&b);
}
END_TEST

START_TEST(test_rebase) {
  /* int32 sliced by 3 with a null; utf8 sliced with non-zero first offset */
  static const int32_t v[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  static const uint8_t valid[] = {0xFF, 0x07 ^ 0x02}; /* index 9 null */
  static const int32_t offs[] = {0, 2, 5, 9, 10};
  static const char data[] = "aabbbccccd";
  struct ArrowSchema *cols[] = {tb_schema("i", "x", 0), tb_schema("u", "y", 0),
                                tb_schema("b", "z", 0)};
  struct ArrowArray *arrs[] = {tb_primn(7, 1, valid, v), tb_var(2, 0, NULL, offs, data),
                               tb_primn(7, 1, valid, valid)};
  arrs[0]->offset = 3;
  arrs[1]->offset = 2;
  arrs[2]->offset = 3;
  struct ArrowSchema *s;
  struct ArrowArray *a;
  tb_batch(3, cols, arrs, 2, &s, &a);
  a->offset = 5; /* rows 5,6 of x (physical 8,9); y has length 2 so use offset... */
  a->length = 2;
  arrs[1]->offset = 0; /* y: rows 5,6 would be past its end; give y enough rows */
  arrs[1]->length = 7;
  static const int32_t offs7[] = {0, 0, 0, 0, 0, 0, 2, 5};
  arrs[1]->buffers[1] = offs7;
  struct lnc_buf b = encode_ok(s, a);
  struct msg m[4];
  ck_assert_int_eq(parse_stream(b.data, b.len, m, 4), 2);
  const uint8_t *rb = m[1].header;
  int64_t len, nulls;
  rb_node(rb, 0, &len, &nulls);
  ck_assert_int_eq(len, 2);
  ck_assert_int_eq(nulls, 1);
  const uint8_t *p = rb_buffer(&m[1], rb, 0, &len); /* validity: bits for physical 8,9 */
  ck_assert_int_eq(len, 1);
  ck_assert_uint_eq(p[0], 0x01);
  p = rb_buffer(&m[1], rb, 1, &len);
  ck_assert_int_eq(len, 8);
  ck_assert_int_eq((int32_t)rd32(p), 8);
  ck_assert_int_eq((int32_t)rd32(p + 4), 9);
  /* y: no nulls → empty validity; offsets rebased to 0; data "aabbb" */
  rb_node(rb, 1, &len, &nulls);
  ck_assert_int_eq(nulls, 0);
  rb_buffer(&m[1], rb, 2, &len);
  ck_assert_int_eq(len, 0);
  p = rb_buffer(&m[1], rb, 3, &len);
  ck_assert_int_eq(len, 12);
  ck_assert_int_eq((int32_t)rd32(p), 0);
  ck_assert_int_eq((int32_t)rd32(p + 4), 2);
  ck_assert_int_eq((int32_t)rd32(p + 8), 5);
  p = rb_buffer(&m[1], rb, 4, &len);
  ck_assert_int_eq(len, 5);
  ck_assert(memcmp(p, "aabbb", 5) == 0);
  /* z: bool values = the validity bytes themselves, physical 8,9 → bits 1,0 */
  p = rb_buffer(&m[1], rb, 6, &len);
  ck_assert_int_eq(len, 1);
  ck_assert_uint_eq(p[0], 0x01);
  lnc_buf_free(&b);
}
END_TEST

START_TEST(test_dictionary_batches) {
  struct ArrowSchema *s;
  struct ArrowArray *a;
  batch_dict(&s, &a);
  struct lnc_buf b = encode_ok(s, a);
  struct msg m[6];
  ck_assert_int_eq(parse_stream(b.data, b.len, m, 6), 4);
  const uint8_t *fields = fb_table_at(m[0].header, 1);
  const uint8_t *f0 = fb_vec_table(fields, 0);
  ck_assert_int_eq(fb_int(f0, 2, 1, 0), 5); /* value type Utf8 */
  const uint8_t *de = fb_table_at(f0, 4);
  ck_assert_ptr_nonnull(de);
  int64_t id0 = fb_int(de, 0, 8, -1);
  const uint8_t *it = fb_table_at(de, 1);
  ck_assert_int_eq(fb_int(it, 0, 4, 0), 8);
  ck_assert_int_eq(fb_int(it, 1, 1, 0), 1);
  int64_t ids[2] = {fb_int(m[1].header, 0, 8, -1), fb_int(m[2].header, 0, 8, -1)};
  ck_assert(ids[0] == id0 || ids[1] == id0);
  ck_assert_int_ne(ids[0], ids[1]);
  const uint8_t *data = fb_table_at(m[id0 == ids[0] ? 1 : 2].header, 1);
  ck_assert_int_eq(fb_int(data, 0, 8, 0), 3);
  lnc_buf_free(&b);
}
END_TEST

START_TEST(test_errors) {
  static const int32_t v[] = {1};
  struct ArrowSchema *col = tb_schema("+ud:0", "x", 0); /* a union */
  struct ArrowArray *arr = tb_prim(1, v);
  struct ArrowSchema *s;
  struct ArrowArray *a;
  tb_batch(1, &col, &arr, 1, &s, &a);
  struct lnc_buf b = {0};
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_encode_arrow_ipc(s, a, &b, &err), LNC_EUNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(err.message, "+ud:0"));
  ck_assert_uint_eq(b.len, 0);
  /* A map whose one child is not a struct of key and value is not a map. */
  col = tb_schema("+m", "x", 0);
  tb_batch(1, &col, &arr, 1, &s, &a);
  ck_assert_int_eq(lnc_encode_arrow_ipc(s, a, &b, &err), LNC_EINVAL);
  ck_assert_uint_eq(b.len, 0);
  col = tb_schema("i", "x", 0);
  tb_batch(1, &col, &arr, 1, &s, &a);
  s->format = "i";
  ck_assert_int_eq(lnc_encode_arrow_ipc(s, a, &b, &err), LNC_EINVAL);
  lnc_buf_free(&b);
}
END_TEST

/* ---- refs: value buffers left in place ------------------------------------------------------- */
/* The stream lnc_encode_arrow_ipc_refs describes (out with each ref inserted at its `at`) is
 * byte for byte lnc_encode_arrow_ipc's, for every test batch (sliced, nested, dictionaries)
 * and every threshold, from every buffer a ref to none; refs come in order, inside out. */
START_TEST(test_refs_same_bytes) {
  static const size_t min_refs[] = {1, 4, 8, 17, 64, 1 << 20};
  for (size_t t = 0; t < sizeof BATCHES / sizeof BATCHES[0]; t++) {
    struct ArrowSchema *s;
    struct ArrowArray *a;
    BATCHES[t].fn(&s, &a);
    struct lnc_buf want = encode_ok(s, a);
    for (size_t m = 0; m < sizeof min_refs / sizeof min_refs[0]; m++) {
      struct lnc_buf out = {0}, got = {0};
      struct lnc_ipc_ref *refs;
      size_t nrefs, at = 0, ref_bytes = 0;
      struct lnc_error err;
      ck_assert_msg(lnc_encode_arrow_ipc_refs(s, a, min_refs[m], &out, &refs, &nrefs, &err) == 0, "%s: %s",
                    BATCHES[t].name, err.message);
      for (size_t i = 0; i < nrefs; i++) {
        ck_assert_uint_ge(refs[i].at, at);
        ck_assert_uint_le(refs[i].at, out.len);
        ck_assert_uint_ge(refs[i].len, min_refs[m]);
        ck_assert_int_eq(lnc_buf_append(&got, out.data + at, refs[i].at - at), 0);
        ck_assert_int_eq(lnc_buf_append(&got, refs[i].ptr, refs[i].len), 0);
        at = refs[i].at;
        ref_bytes += refs[i].len;
      }
      ck_assert_int_eq(lnc_buf_append(&got, out.data + at, out.len - at), 0);
      ck_assert_msg(got.len == want.len && !memcmp(got.data, want.data, want.len),
                    "%s, min_ref %zu: %zu bytes against %zu", BATCHES[t].name, min_refs[m], got.len, want.len);
      ck_assert_uint_eq(out.len + ref_bytes, want.len);
      if (min_refs[m] == 1 && strcmp(BATCHES[t].name, "empty")) ck_assert_uint_gt(nrefs, 0);
      if (min_refs[m] == 1 << 20) ck_assert_uint_eq(nrefs, 0);
      free(refs);
      lnc_buf_free(&out);
      lnc_buf_free(&got);
    }
    lnc_buf_free(&want);
  }
  struct lnc_buf out = {0};
  struct lnc_ipc_ref *refs;
  size_t n;
  struct lnc_error err;
  ck_assert_int_eq(lnc_encode_arrow_ipc_refs(NULL, NULL, 1, &out, &refs, &n, &err), LNC_EINVAL);
}
END_TEST

/* ---- round-trip files ------------------------------------------------------------------------ */
static void put_jstr(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      fprintf(f, "\\%c", *s);
    else if ((unsigned char)*s < 0x20)
      fprintf(f, "\\u%04x", *s);
    else
      fputc(*s, f);
  }
  fputc('"', f);
}

static void describe(FILE *f, const struct ArrowSchema *s) {
  char fmt[64];
  snprintf(fmt, sizeof fmt, "%s", s->format);
  if (strncmp(fmt, "d:", 2) == 0 && !strchr(strchr(fmt, ',') + 1, ','))
    strncat(fmt, ",128", sizeof fmt - strlen(fmt) - 1); /* normalize decimal128 */
  fprintf(f, "{\"name\":");
  put_jstr(f, s->name ? s->name : "");
  fprintf(f, ",\"format\":");
  put_jstr(f, fmt);
  fprintf(f, ",\"nullable\":%s,\"children\":[", (s->flags & ARROW_FLAG_NULLABLE) ? "true" : "false");
  for (int64_t i = 0; i < s->n_children; i++) {
    if (i) fputc(',', f);
    describe(f, s->children[i]);
  }
  fprintf(f, "],\"dictionary\":");
  if (s->dictionary)
    describe(f, s->dictionary);
  else
    fprintf(f, "null");
  fputc('}', f);
}

static void write_file(const char *dir, const char *name, const char *ext, const void *d, size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s%s", dir, name, ext);
  FILE *f = fopen(path, "wb");
  ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
  ck_assert_uint_eq(fwrite(d, 1, n, f), n);
  fclose(f);
}

START_TEST(test_roundtrip_files) {
  const char *dir = getenv("IPC_OUT_DIR");
  for (size_t t = 0; t < sizeof BATCHES / sizeof BATCHES[0]; t++) {
    struct ArrowSchema *s;
    struct ArrowArray *a;
    BATCHES[t].fn(&s, &a);
    struct lnc_buf ipc = encode_ok(s, a), json = {0};
    struct lnc_error err;
    ck_assert_msg(lnc_encode_json(s, a, &json, &err) == 0, "json: %s", err.message);
    if (dir && *dir) {
      write_file(dir, BATCHES[t].name, ".arrows", ipc.data, ipc.len);
      write_file(dir, BATCHES[t].name, ".json", json.data, json.len);
      char path[4096];
      snprintf(path, sizeof path, "%s/%s.schema.json", dir, BATCHES[t].name);
      FILE *f = fopen(path, "w");
      ck_assert_ptr_nonnull(f);
      fputc('[', f);
      for (int64_t i = 0; i < s->n_children; i++) {
        if (i) fputc(',', f);
        describe(f, s->children[i]);
      }
      fputs("]\n", f);
      fclose(f);
    }
    lnc_buf_free(&ipc);
    lnc_buf_free(&json);
  }
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("ipc");
  TCase *tc = tcase_create("encode");
  tcase_add_checked_fixture(tc, NULL, teardown);
  tcase_add_test(tc, test_framing);
  tcase_add_test(tc, test_appends);
  tcase_add_test(tc, test_schema_fields);
  tcase_add_test(tc, test_rebase);
  tcase_add_test(tc, test_dictionary_batches);
  tcase_add_test(tc, test_errors);
  tcase_add_test(tc, test_roundtrip_files);
  tcase_add_test(tc, test_refs_same_bytes);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return tsup_run(suite());
}
