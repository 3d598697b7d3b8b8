/* Unit tests for stable row id sequences (lib/dataset/rowids.c): every segment kind of Lance's
 * RowIdSequence (range, range with holes, range with bitmap, sorted array, array; u16, u32
 * and u64 arrays) decoded to the ids Lance's reader gives, several segments in a row, and
 * damaged sequences refused with LNC_ECORRUPT (a wrong count, holes out of range or order,
 * a short bitmap, ragged arrays, every truncation) without reading or writing out of bounds.
 * Then the stable-row-id fixtures (written by LanceDB): rows by row id equal rows by offset,
 * and _rowid / _rowaddr are what Lance's scan gives. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dataset/dataset.h"
#include "lance.h"
#include "support/support.h"

/* ---- a small protobuf writer ---------------------------------------------------------------- */
struct pb {
  uint8_t b[512];
  size_t n;
};

static void varint(struct pb *p, uint64_t v) {
  do {
    uint8_t c = v & 0x7f;
    v >>= 7;
    p->b[p->n++] = c | (v ? 0x80 : 0);
  } while (v);
}
static void field_varint(struct pb *p, unsigned num, uint64_t v) {
  varint(p, (uint64_t)num << 3);
  varint(p, v);
}
static void field_bytes(struct pb *p, unsigned num, const void *d, size_t len) {
  varint(p, (uint64_t)num << 3 | 2);
  varint(p, len);
  memcpy(p->b + p->n, d, len);
  p->n += len;
}
static void field_msg(struct pb *p, unsigned num, const struct pb *m) { field_bytes(p, num, m->b, m->n); }

/* EncodedU64Array of width 2, 4 or 8 (u16/u32 offsets from base, or u64 values). */
static struct pb enc_array(unsigned width, uint64_t base, const uint64_t *v, size_t n) {
  struct pb inner = {0}, out = {0};
  uint8_t raw[256];
  for (size_t i = 0; i < n; i++)
    for (unsigned k = 0; k < width; k++) raw[i * width + k] = (uint8_t)(v[i] >> (8 * k));
  if (width != 8) field_varint(&inner, 1, base);
  field_bytes(&inner, 2, raw, n * width);
  field_msg(&out, width == 2 ? 1 : width == 4 ? 2
                                              : 3,
            &inner);
  return out;
}
static struct pb range_seg(unsigned kind, uint64_t start, uint64_t end, const struct pb *extra,
                           const uint8_t *bits, size_t nbits) {
  struct pb r = {0}, seg = {0};
  field_varint(&r, 1, start);
  field_varint(&r, 2, end);
  if (extra) field_msg(&r, 3, extra);
  if (bits) field_bytes(&r, 3, bits, nbits);
  field_msg(&seg, kind, &r);
  return seg;
}
static struct pb array_seg(unsigned kind, const struct pb *arr) {
  struct pb seg = {0};
  field_msg(&seg, kind, arr);
  return seg;
}
/* A RowIdSequence of the given segments. */
static struct pb sequence(const struct pb *segs, size_t n) {
  struct pb s = {0};
  for (size_t i = 0; i < n; i++) field_msg(&s, 1, &segs[i]);
  return s;
}

static void expect(const struct pb *seq, const uint64_t *want, size_t n) {
  uint64_t got[64];
  struct lnc_error err = {0};
  ck_assert_msg(lnc_ds_rowids_decode(seq->b, seq->n, n, got, &err) == 0, "%s", err.message);
  for (size_t i = 0; i < n; i++) ck_assert_uint_eq(got[i], want[i]);
}

static void refused(const struct pb *seq, uint64_t rows) {
  uint64_t *got = malloc((rows ? rows : 1) * sizeof *got);
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_ds_rowids_decode(seq->b, seq->n, rows, got, &err), LNC_ECORRUPT);
  ck_assert_msg(strstr(err.message, "row id"), "%s", err.message);
  free(got);
}

START_TEST(test_segment_kinds) {
  struct pb s;
  /* range */
  struct pb r = range_seg(1, 10, 15, NULL, NULL, 0);
  s = sequence(&r, 1);
  expect(&s, (uint64_t[]){10, 11, 12, 13, 14}, 5);
  /* range with holes (u16 holes) */
  struct pb holes = enc_array(2, 0, (uint64_t[]){2, 5}, 2);
  r = range_seg(2, 0, 10, &holes, NULL, 0);
  s = sequence(&r, 1);
  expect(&s, (uint64_t[]){0, 1, 3, 4, 6, 7, 8, 9}, 8);
  /* range with bitmap: bit j of byte j / 8, least significant first */
  static const uint8_t bits[] = {0x05, 0x02};
  r = range_seg(3, 100, 110, NULL, bits, 2);
  s = sequence(&r, 1);
  expect(&s, (uint64_t[]){100, 102, 109}, 3);
  /* sorted array (u32 offsets from a base), array (u64 values, unsorted) */
  struct pb a32 = enc_array(4, 1000, (uint64_t[]){0, 5, 70000}, 3);
  r = array_seg(4, &a32);
  s = sequence(&r, 1);
  expect(&s, (uint64_t[]){1000, 1005, 71000}, 3);
  struct pb a64 = enc_array(8, 0, (uint64_t[]){7, 3, 1ull << 40}, 3);
  r = array_seg(5, &a64);
  s = sequence(&r, 1);
  expect(&s, (uint64_t[]){7, 3, 1ull << 40}, 3);
  /* several segments, one after the other */
  struct pb a16 = enc_array(2, 50, (uint64_t[]){2, 1}, 2);
  struct pb segs[] = {range_seg(1, 0, 3, NULL, NULL, 0), array_seg(5, &a16), range_seg(3, 100, 110, NULL, bits, 2)};
  s = sequence(segs, 3);
  expect(&s, (uint64_t[]){0, 1, 2, 52, 51, 100, 102, 109}, 8);
  /* no segments: no rows */
  s = sequence(NULL, 0);
  expect(&s, NULL, 0);
}
END_TEST

START_TEST(test_damaged) {
  struct pb s, r;
  r = range_seg(1, 10, 15, NULL, NULL, 0);
  s = sequence(&r, 1);
  refused(&s, 6); /* a count that is not the fragment's rows */
  refused(&s, 4);
  r = range_seg(1, 15, 10, NULL, NULL, 0); /* end before start */
  s = sequence(&r, 1);
  refused(&s, 0);
  r = range_seg(1, 0, 1ull << 60, NULL, NULL, 0); /* a huge count, refused before any walk */
  s = sequence(&r, 1);
  refused(&s, 5);
  struct pb out = enc_array(2, 0, (uint64_t[]){2, 20}, 2); /* a hole past the range */
  r = range_seg(2, 0, 10, &out, NULL, 0);
  s = sequence(&r, 1);
  refused(&s, 8);
  struct pb order = enc_array(2, 0, (uint64_t[]){5, 2}, 2); /* holes out of order */
  r = range_seg(2, 0, 10, &order, NULL, 0);
  s = sequence(&r, 1);
  refused(&s, 8);
  struct pb twice = enc_array(2, 0, (uint64_t[]){5, 5}, 2); /* a hole twice */
  r = range_seg(2, 0, 10, &twice, NULL, 0);
  s = sequence(&r, 1);
  refused(&s, 8);
  r = range_seg(2, 0, 10, NULL, NULL, 0); /* holes missing */
  s = sequence(&r, 1);
  refused(&s, 10);
  static const uint8_t one[] = {0xff};
  r = range_seg(3, 0, 16, NULL, one, 1); /* a bitmap shorter than its range */
  s = sequence(&r, 1);
  refused(&s, 8);
  struct pb ragged = {0}, inner = {0};
  field_varint(&inner, 1, 0);
  field_bytes(&inner, 2, "\1\2\3", 3); /* three bytes of u16 offsets */
  field_msg(&ragged, 1, &inner);
  r = array_seg(4, &ragged);
  s = sequence(&r, 1);
  refused(&s, 1);
  struct pb empty = {0}; /* a segment of no kind */
  s = sequence(&empty, 1);
  refused(&s, 0);
  /* every truncation of a valid sequence: refused (or, cut between segments, a wrong count) */
  struct pb a16 = enc_array(2, 50, (uint64_t[]){2, 1}, 2);
  struct pb holes = enc_array(2, 0, (uint64_t[]){2, 5}, 2);
  struct pb segs[] = {range_seg(1, 0, 3, NULL, NULL, 0), array_seg(5, &a16), range_seg(2, 0, 10, &holes, NULL, 0)};
  s = sequence(segs, 3);
  for (size_t cut = 0; cut < s.n; cut++) {
    uint64_t got[16];
    struct lnc_error err = {0};
    uint8_t *copy = malloc(cut ? cut : 1); /* exactly cut bytes: ASan sees a read past them */
    memcpy(copy, s.b, cut);
    ck_assert_int_eq(lnc_ds_rowids_decode(copy, cut, 13, got, &err), LNC_ECORRUPT);
    free(copy);
  }
}
END_TEST

/* ---- the stable-row-id fixtures ------------------------------------------------------------- */
#define FIX "tests/fixtures/datasets"

START_TEST(test_stable_fixtures) {
  static const char *const names[] = {"stable_v20", "stable_v21", "stable_v22"};
  for (size_t k = 0; k < 3; k++) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s.rowids", FIX, names[k]);
    char *text = (char *)tsup_read_file(path, NULL);
    ck_assert_msg(text != NULL, "%s is missing", path);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
      char *fld[4]; /* version, rows, Lance's _rowid of each live offset, its _rowaddr */
      ck_assert(tsup_split_tabs(line, fld, 4));
      uint64_t version = strtoull(fld[0], NULL, 10);
      size_t n, na;
      uint64_t *rid = tsup_parse_ids(fld[2], &n), *raddr = tsup_parse_ids(fld[3], &na);
      ck_assert_uint_eq(na, n);
      char dir[256];
      snprintf(dir, sizeof dir, "%s/%s.lance", FIX, names[k]);
      lnc_dataset *ds = NULL;
      struct lnc_error err = {0};
      ck_assert_msg(lnc_dataset_open(dir, version, &ds, &err) == 0, "%s", err.message);
      ck_assert_uint_gt(ds->nidruns, 0);
      uint64_t *offs = malloc(n * sizeof *offs);
      for (size_t i = 0; i < n; i++) offs[i] = i;
      static const char *const cols[] = {"id", "s", "_rowid", "_rowaddr"};
      struct lnc_take_options by_id = {.ids = LNC_IDS_ROW_IDS};
      struct ArrowSchema s1, s2;
      struct ArrowArray a1, a2;
      struct lnc_take_stats st1 = {0}, st2 = {0};
      /* first a take that opens the data files (their metadata reads are counted once) */
      ck_assert_int_eq(lnc_dataset_take_ex(ds, offs, n, cols, 4, NULL, &s1, &a1, NULL, &err), 0);
      s1.release(&s1);
      a1.release(&a1);
      ck_assert_int_eq(lnc_dataset_take_ex(ds, offs, n, cols, 4, NULL, &s1, &a1, &st1, &err), 0);
      ck_assert_msg(lnc_dataset_take_ex(ds, rid, n, cols, 4, &by_id, &s2, &a2, &st2, &err) == 0, "%s", err.message);
      /* the index is in memory: a row-id take reads what the offsets' take reads, no more */
      ck_assert_uint_eq(st2.reads, st1.reads);
      ck_assert_uint_eq(st2.bytes_read, st1.bytes_read);
      char *j1 = tsup_json(&s1, &a1), *j2 = tsup_json(&s2, &a2);
      ck_assert_msg(!strcmp(j1, j2), "%s@%llu: rows by row id differ from rows by offset", names[k],
                    (unsigned long long)version);
      const uint64_t *got = a1.children[2]->buffers[1];  /* _rowid of the offsets: Lance's ids */
      const uint64_t *gota = a1.children[3]->buffers[1]; /* _rowaddr: Lance's addresses */
      for (size_t i = 0; i < n; i++) {
        ck_assert_uint_eq(got[i], rid[i]);
        ck_assert_uint_eq(gota[i], raddr[i]);
      }
      uint64_t never = 1ull << 50;
      struct ArrowSchema s3;
      struct ArrowArray a3;
      ck_assert_int_eq(lnc_dataset_take_ex(ds, &never, 1, NULL, 0, &by_id, &s3, &a3, NULL, &err), LNC_ENOTFOUND);
      ck_assert_msg(strstr(err.message, "names no live row"), "%s", err.message);
      free(j1);
      free(j2);
      s1.release(&s1);
      a1.release(&a1);
      s2.release(&s2);
      a2.release(&a2);
      free(offs);
      free(rid);
      free(raddr);
      lnc_dataset_close(ds);
    }
    free(text);
  }
}
END_TEST

/* A damaged sequence (the manifest's bytes changed in memory, the index built again): offsets
 * still read, row-id takes and _rowid answer the corruption, naming the fragment. */
START_TEST(test_damaged_sequence_keeps_offsets) {
  lnc_dataset *ds = NULL;
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_dataset_open(FIX "/stable_v22.lance", 0, &ds, &err), 0);
  Lance__Table__DataFragment *fr = (Lance__Table__DataFragment *)ds->frags[0].pb;
  ck_assert_uint_gt(fr->inline_row_ids.len, 2);
  fr->inline_row_ids.len = 2; /* cut short: a segment that does not parse */
  free(ds->idruns);
  free(ds->idruns_addr);
  ds->idruns = ds->idruns_addr = NULL;
  ds->nidruns = 0;
  ck_assert_int_eq(lnc_ds_rowids_build(ds), 0);
  ck_assert_int_eq(ds->rowid_err.code, LNC_ECORRUPT);
  uint64_t id = 0;
  struct ArrowSchema s;
  struct ArrowArray a;
  ck_assert_int_eq(lnc_dataset_take(ds, &id, 1, NULL, 0, &s, &a, NULL, &err), 0); /* offsets: fine */
  s.release(&s);
  a.release(&a);
  struct lnc_take_options by_id = {.ids = LNC_IDS_ROW_IDS};
  ck_assert_int_eq(lnc_dataset_take_ex(ds, &id, 1, NULL, 0, &by_id, &s, &a, NULL, &err), LNC_ECORRUPT);
  ck_assert_msg(strstr(err.message, "stable row ids") && strstr(err.message, "fragment"), "%s", err.message);
  static const char *const rid[] = {"_rowid"};
  ck_assert_int_eq(lnc_dataset_take_ex(ds, &id, 1, rid, 1, NULL, &s, &a, NULL, &err), LNC_ECORRUPT);
  lnc_dataset_close(ds);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("rowids");
  TCase *tc = tcase_create("rowids");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_segment_kinds);
  tcase_add_test(tc, test_damaged);
  tcase_add_test(tc, test_stable_fixtures);
  tcase_add_test(tc, test_damaged_sequence_keeps_offsets);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return tsup_run(suite()); }
