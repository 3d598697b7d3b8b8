/* Unit tests for lib/dataset against datasets written by real Lance (tests/fixtures/datasets,
 * made by gen-datasets.mjs): version discovery, manifests, both deletion file kinds, row
 * mapping vs Lance's row addresses, damaged datasets, and takes vs Lance's takeOffsets. */
#include "lance.h"
#include "dataset/dataset.h"
#include <check.h>
#include "support/support.h"
#include <errno.h>
#include <jansson.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FIX      TSUP_DS_DIR
#define FIXTURES tsup_ds_fixtures
#define NFIX     tsup_n_ds_fixtures

static lnc_dataset *open_in(const char *dir, const char *name, uint64_t version) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s.lance", dir, name);
  lnc_dataset *ds = NULL;
  struct lnc_error err = {0};
  int rc = lnc_dataset_open(path, version, &ds, &err);
  ck_assert_msg(rc == 0, "open %s@%llu: %s", path, (unsigned long long)version, err.message);
  return ds;
}
static lnc_dataset *open_ok(const char *name, uint64_t version) { return open_in(FIX, name, version); }

/* ---- version discovery ----------------------------------------------------------------- */
START_TEST(test_manifest_names) {
  struct lnc_ds_version v;
  ck_assert_int_eq(lnc_ds_parse_manifest_name("1.manifest", &v), 1);
  ck_assert_uint_eq(v.version, 1);
  ck_assert_int_eq(v.naming, LNC_DS_NAMING_V1);
  ck_assert_int_eq(lnc_ds_parse_manifest_name("18446744073709551614.manifest", &v), 1);
  ck_assert_uint_eq(v.version, 1);
  ck_assert_int_eq(v.naming, LNC_DS_NAMING_V2);
  ck_assert_int_eq(lnc_ds_parse_manifest_name("18446744073709551607.manifest", &v), 1);
  ck_assert_uint_eq(v.version, 8);
  ck_assert_int_eq(lnc_ds_parse_manifest_name("latest_version_hint.json", &v), 0);
  ck_assert_int_eq(lnc_ds_parse_manifest_name("d1.manifest", &v), 0);
  ck_assert_int_eq(lnc_ds_parse_manifest_name(".manifest", &v), 0);
  ck_assert_int_eq(lnc_ds_parse_manifest_name("01.manifest", &v), 0);
  ck_assert_int_eq(lnc_ds_parse_manifest_name("99999999999999999999.manifest", &v), 0);
  ck_assert_int_eq(lnc_ds_parse_manifest_name("12.manifest.tmp", &v), 0);
  char buf[64];
  v.version = 8;
  v.naming = LNC_DS_NAMING_V2;
  lnc_ds_manifest_name(&v, buf, sizeof buf);
  ck_assert_str_eq(buf, "18446744073709551607.manifest");
  v.naming = LNC_DS_NAMING_V1;
  lnc_ds_manifest_name(&v, buf, sizeof buf);
  ck_assert_str_eq(buf, "8.manifest");
}
END_TEST

START_TEST(test_versions_latest_and_pinned) {
  for (size_t i = 0; i < NFIX; i++) {
    lnc_dataset *ds = open_ok(FIXTURES[i].name, 0);
    ck_assert_uint_eq(lnc_dataset_version(ds), FIXTURES[i].latest);
    uint64_t latest = 0;
    struct lnc_error err = {0};
    ck_assert_int_eq(lnc_dataset_latest_version(ds, &latest, &err), 0);
    ck_assert_uint_eq(latest, FIXTURES[i].latest);
    lnc_dataset_close(ds);
    for (uint64_t v = 1; v <= FIXTURES[i].latest; v++) {
      ds = open_ok(FIXTURES[i].name, v);
      ck_assert_uint_eq(lnc_dataset_version(ds), v);
      lnc_dataset_close(ds);
    }
  }
}
END_TEST

START_TEST(test_version_missing) {
  lnc_dataset *ds = NULL;
  struct lnc_error err = {0};
  int rc = lnc_dataset_open(FIX "/multi_v21.lance", 99, &ds, &err);
  ck_assert_int_eq(rc, LNC_ENOTFOUND);
  ck_assert_ptr_null(ds);
  ck_assert_msg(strstr(err.message, "version 99 not found"), "%s", err.message);
  rc = lnc_dataset_open(FIX "/no_such.lance", 0, &ds, &err);
  ck_assert_int_eq(rc, LNC_ENOTFOUND);
  rc = lnc_dataset_open(FIX, 0, &ds, &err); /* a directory without _versions */
  ck_assert_int_eq(rc, LNC_ENOTFOUND);
  ck_assert_msg(strstr(err.message, "_versions"), "%s", err.message);
}
END_TEST

/* ---- manifests and deletions ------------------------------------------------------------ */
START_TEST(test_manifests_parse) {
  for (size_t i = 0; i < NFIX; i++) {
    for (uint64_t v = 1; v <= FIXTURES[i].latest; v++) {
      lnc_dataset *ds = open_ok(FIXTURES[i].name, v);
      const Lance__Table__Manifest *m = ds->m;
      ck_assert_uint_eq(m->version, v);
      /* id, x, s, l (+ item) — the dictionary datasets have id and cat */
      ck_assert_uint_ge(m->n_fields, strncmp(FIXTURES[i].name, "dict_", 5) == 0 ? 2 : 4);
      ck_assert_str_eq(m->fields[0]->name, "id");
      ck_assert_int_eq(m->fields[0]->parent_id, -1);
      for (size_t f = 0; f < ds->nfrag; f++) {
        const Lance__Table__DataFragment *fr = ds->frags[f].pb;
        ck_assert_uint_gt(fr->physical_rows, 0);
        for (size_t j = 0; j < fr->n_files; j++) {
          /* legacy datasets (the _v01 ones) write file version 0.2 and no column indices */
          bool legacy = strstr(FIXTURES[i].name, "_v01") != NULL;
          ck_assert_uint_eq(fr->files[j]->file_major_version, legacy ? 0 : 2);
          ck_assert_uint_eq(fr->files[j]->n_column_indices, legacy ? 0 : fr->files[j]->n_fields);
        }
      }
      struct lnc_buf b = {0};
      struct lnc_error err = {0};
      ck_assert_int_eq(lnc_dataset_describe_json(ds, &b, &err), 0);
      ck_assert(b.len > 0 && b.data[0] == '{' && b.data[b.len - 1] == '}');
      lnc_buf_free(&b);
      lnc_dataset_close(ds);
    }
  }
}
END_TEST

START_TEST(test_addcol_second_file) {
  lnc_dataset *ds = open_ok("addcol_v21", 0);
  ck_assert_uint_eq(ds->nfrag, 2);
  for (size_t f = 0; f < ds->nfrag; f++) {
    ck_assert_uint_eq(ds->frags[f].nfiles, 2);
    const Lance__Table__DataFile *d2 = ds->frags[f].pb->files[1];
    ck_assert_uint_eq(d2->n_fields, 1);
    ck_assert_int_eq(d2->column_indices[0], 0);
  }
  lnc_dataset_close(ds);
  ds = open_ok("addcol_v21", 2); /* before addColumns: one file per fragment */
  for (size_t f = 0; f < ds->nfrag; f++) ck_assert_uint_eq(ds->frags[f].nfiles, 1);
  lnc_dataset_close(ds);
}
END_TEST

START_TEST(test_deletion_kinds) {
  const char *names[] = {"deletions_v21", "deletions_v22"};
  for (int t = 0; t < 2; t++) {
    lnc_dataset *ds = open_ok(names[t], 0);
    int arrow = 0, bitmap = 0;
    ck_assert_uint_eq(ds->nfrag, 4);
    for (size_t f = 0; f < ds->nfrag; f++) {
      const Lance__Table__DeletionFile *df = ds->frags[f].pb->deletion_file;
      if (!df) {
        ck_assert_uint_eq(ds->frags[f].del.n, 0);
        continue;
      }
      ck_assert_uint_eq(ds->frags[f].del.n, df->num_deleted_rows);
      if (df->file_type == LANCE__TABLE__DELETION_FILE__DELETION_FILE_TYPE__BITMAP)
        bitmap++;
      else
        arrow++;
      const struct lnc_ds_deletions *d = &ds->frags[f].del;
      uint64_t sum = 0;
      for (size_t k = 0; k < d->nruns; k++) { /* sorted, not touching, before = rows so far */
        if (k) ck_assert_uint_lt((uint64_t)d->runs[k - 1].start + d->runs[k - 1].len, d->runs[k].start);
        ck_assert_uint_eq(d->runs[k].before, sum);
        ck_assert_uint_gt(d->runs[k].len, 0);
        sum += d->runs[k].len;
      }
      ck_assert_uint_eq(sum, d->n);
    }
    ck_assert_int_ge(arrow, 2);
    ck_assert_int_eq(bitmap, 1);
    /* fragment 1: rows 400..6399, all deleted but every 20th → 5700 deleted, a bitmap */
    ck_assert_uint_eq(ds->frags[1].del.n, 5700);
    ck_assert_uint_eq(ds->frags[1].del.nruns, 300); /* 19 rows between kept ones */
    ck_assert_uint_eq(ds->frags[1].del.runs[0].start, 1);
    ck_assert_uint_eq(ds->frags[1].del.runs[0].len, 19);
    ck_assert_uint_eq(lnc_dataset_num_rows(ds), 6900 - 57 - 5700 - 40 - 2);
    lnc_dataset_close(ds);
  }
}
END_TEST

static void put16(uint8_t *b, size_t *p, uint16_t v) {
  memcpy(b + *p, &v, 2);
  *p += 2;
}

START_TEST(test_roaring_containers) {
  /* cookie 12347 with 3 containers: key 0 run [5..9], key 1 array {3, 70}, key 2 a bitmap
   * (bits 0..4999 and 6000: 5001 values) */
  uint8_t b[16384];
  size_t p = 0;
  uint32_t cookie = 12347u | (2u << 16);
  memcpy(b + p, &cookie, 4);
  p += 4;
  b[p++] = 0x01; /* run bitmap: container 0 is a run container */
  uint16_t hdr[6] = {0, 4, 1, 1, 2, 5000};
  for (int i = 0; i < 6; i++) put16(b, &p, hdr[i]);
  uint16_t run[3] = {1, 5, 4};
  for (int i = 0; i < 3; i++) put16(b, &p, run[i]);
  put16(b, &p, 3);
  put16(b, &p, 70);
  uint8_t *bits = b + p;
  memset(bits, 0, 8192);
  for (int i = 0; i < 5000; i++) bits[i / 8] |= (uint8_t)(1u << (i % 8));
  bits[6000 / 8] |= 1u << (6000 % 8);
  p += 8192;
  struct lnc_ds_deletions d;
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_ds_read_roaring(b, p, "t", 1 << 20, &d, &err), 0);
  ck_assert_uint_eq(d.n, 5 + 2 + 5001);
  ck_assert_uint_eq(d.nruns, 5);
  struct lnc_ds_delrun want[5] = {{5, 5, 0}, {65536 + 3, 1, 5}, {65536 + 70, 1, 6}, {131072, 5000, 7}, {131072 + 6000, 1, 5007}};
  for (int i = 0; i < 5; i++) {
    ck_assert_uint_eq(d.runs[i].start, want[i].start);
    ck_assert_uint_eq(d.runs[i].len, want[i].len);
    ck_assert_uint_eq(d.runs[i].before, want[i].before);
  }
  free(d.runs);
  ck_assert_int_eq(lnc_ds_read_roaring(b, p, "t", 6, &d, &err), LNC_ECORRUPT);
  ck_assert_int_eq(lnc_ds_read_roaring(b, p - 1, "t", 1 << 20, &d, &err), LNC_ECORRUPT);
  ck_assert_int_eq(lnc_ds_read_roaring(b, 3, "t", 1 << 20, &d, &err), LNC_ECORRUPT);
  bits[4000] = 0xff; /* more set bits than the header's cardinality */
  ck_assert_int_eq(lnc_ds_read_roaring(b, p, "t", 1 << 20, &d, &err), LNC_ECORRUPT);
  ck_assert_msg(strstr(err.message, "cardinality"), "%s", err.message);
  uint32_t bad = 1234;
  memcpy(b, &bad, 4);
  ck_assert_int_eq(lnc_ds_read_roaring(b, p, "t", 1 << 20, &d, &err), LNC_ECORRUPT);
  ck_assert_msg(strstr(err.message, "cookie"), "%s", err.message);
}
END_TEST

/* 50,000 full run containers, 700 KB, delete 3.3 billion rows of a fragment the manifest says
 * has 2^32: kept as one run (rows were once expanded one by one: 13 GB and a minute). */
START_TEST(test_roaring_runs_stay_runs) {
  const uint32_t nc = 50000;
  size_t cap = 4 + (nc + 7) / 8 + 8 * (size_t)nc + 6 * (size_t)nc, p = 0;
  uint8_t *b = malloc(cap);
  ck_assert_ptr_nonnull(b);
  uint32_t cookie = 12347u | ((nc - 1) << 16);
  memcpy(b, &cookie, 4);
  p = 4;
  memset(b + p, 0xff, (nc + 7) / 8); /* every container a run container */
  p += (nc + 7) / 8;
  for (uint32_t i = 0; i < nc; i++) {
    put16(b, &p, (uint16_t)i);
    put16(b, &p, 65535);
  }
  for (uint32_t i = 0; i < nc; i++) { /* offsets: not read */
    uint32_t z = 0;
    memcpy(b + p, &z, 4);
    p += 4;
  }
  for (uint32_t i = 0; i < nc; i++) {
    put16(b, &p, 1);
    put16(b, &p, 0);
    put16(b, &p, 65535);
  }
  ck_assert_uint_eq(p, cap);
  struct lnc_ds_deletions d;
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_ds_read_roaring(b, p, "t", (uint64_t)1 << 32, &d, &err), 0);
  ck_assert_uint_eq(d.n, (uint64_t)nc << 16);
  ck_assert_uint_eq(d.nruns, 1);
  /* live rank 0 of that fragment is the first row after the run */
  ck_assert_uint_eq(lnc_ds_live_to_physical(&d, 0), (uint64_t)nc << 16);
  free(d.runs);
  free(b);
}
END_TEST

START_TEST(test_live_to_physical) {
  struct lnc_ds_deletions d = {0};
  ck_assert_uint_eq(lnc_ds_live_to_physical(&d, 7), 7);
  ck_assert_int_eq(lnc_ds_del_add(&d, 0, 2), 0);
  ck_assert_int_eq(lnc_ds_del_add(&d, 1, 1), 0); /* inside the last run: nothing new */
  ck_assert_int_eq(lnc_ds_del_add(&d, 2, 1), 0); /* touches it: extends it */
  ck_assert_int_eq(lnc_ds_del_add(&d, 6, 1), 0);
  ck_assert_uint_eq(d.nruns, 2);
  ck_assert_uint_eq(d.n, 4);
  /* deleted 0,1,2,6: live rows 3,4,5,7,8,... */
  uint64_t want[] = {3, 4, 5, 7, 8, 9};
  for (uint64_t k = 0; k < 6; k++) ck_assert_uint_eq(lnc_ds_live_to_physical(&d, k), want[k]);
  ck_assert_int_eq(lnc_ds_del_add(&d, 7, UINT32_MAX), LNC_ERANGE);
  free(d.runs);
}
END_TEST

START_TEST(test_arrow_deletion_reader_bounds) {
  /* A real Arrow deletion file, every truncation and a byte flip must fail cleanly. */
  lnc_dataset *ds = open_ok("deletions_v21", 0);
  char path[512], rel[128];
  lnc_ds_deletion_path(ds->frags[0].pb->id, ds->frags[0].pb->deletion_file, rel, sizeof rel);
  snprintf(path, sizeof path, FIX "/deletions_v21.lance/%s", rel);
  size_t len;
  uint8_t *data = tsup_read_file(path, &len);
  ck_assert_ptr_nonnull(data);
  uint32_t *v;
  size_t n;
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_ds_read_arrow_u32(data, len, "t", 300, &v, &n, &err), 0);
  ck_assert_uint_eq(n, ds->frags[0].pb->deletion_file->num_deleted_rows);
  free(v);
  for (size_t cut = 0; cut < len; cut += 7) {
    int rc = lnc_ds_read_arrow_u32(data, cut, "t", 300, &v, &n, &err);
    ck_assert_int_ne(rc, 0);
  }
  for (size_t i = 0; i < len; i += 3) {
    uint8_t *c = malloc(len);
    memcpy(c, data, len);
    c[i] ^= 0x5a;
    if (lnc_ds_read_arrow_u32(c, len, "t", 300, &v, &n, &err) == 0) free(v);
    free(c);
  }
  free(data);
  /* the same for the real Roaring file of fragment 1 */
  lnc_ds_deletion_path(ds->frags[1].pb->id, ds->frags[1].pb->deletion_file, rel, sizeof rel);
  snprintf(path, sizeof path, FIX "/deletions_v21.lance/%s", rel);
  data = tsup_read_file(path, &len);
  ck_assert_ptr_nonnull(data);
  struct lnc_ds_deletions d;
  ck_assert_int_eq(lnc_ds_read_roaring(data, len, "t", 6000, &d, &err), 0);
  ck_assert_uint_eq(d.n, 5700);
  free(d.runs);
  for (size_t cut = 0; cut < len; cut += 97)
    ck_assert_int_ne(lnc_ds_read_roaring(data, cut, "t", 6000, &d, &err), 0);
  for (size_t i = 0; i < 64; i++) {
    uint8_t *c = malloc(len);
    memcpy(c, data, len);
    c[i] ^= 0xa5;
    if (lnc_ds_read_roaring(c, len, "t", 6000, &d, &err) == 0) free(d.runs);
    free(c);
  }
  free(data);
  lnc_dataset_close(ds);
}
END_TEST

/* ---- row mapping vs Lance's row addresses (fragment << 32 | physical row) ----------------- */
/* Every line of dir/name.rowaddr: the live offsets map to Lance's row addresses, one past the
 * end is out of range. Returns the offsets checked. */
static uint64_t rowmap_check(const char *dir, const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s.rowaddr", dir, name);
  char *text = (char *)tsup_read_file(path, NULL);
  ck_assert_msg(text != NULL, "%s is missing", path);
  uint64_t checked = 0;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    char *fld[3]; /* version, rows, addresses */
    ck_assert(tsup_split_tabs(line, fld, 3));
    uint64_t version = strtoull(fld[0], NULL, 10), nrows = strtoull(fld[1], NULL, 10);
    size_t n;
    uint64_t *addr = tsup_parse_ids(fld[2], &n);
    ck_assert_uint_eq(n, nrows);
    lnc_dataset *ds = open_in(dir, name, version);
    ck_assert_uint_eq(lnc_dataset_num_rows(ds), nrows);
    for (uint64_t o = 0; o < nrows; o++) {
      size_t f;
      uint64_t row;
      struct lnc_error err = {0};
      ck_assert_int_eq(lnc_ds_rowmap_lookup(&ds->map, o, &f, &row, &err), 0);
      uint64_t got = (ds->frags[f].pb->id << 32) | row;
      ck_assert_msg(got == addr[o], "%s@%llu offset %llu: got %llx, Lance %llx", name,
                    (unsigned long long)version, (unsigned long long)o, (unsigned long long)got,
                    (unsigned long long)addr[o]);
    }
    checked += nrows;
    size_t f;
    uint64_t row;
    struct lnc_error err = {0};
    ck_assert_int_eq(lnc_ds_rowmap_lookup(&ds->map, nrows, &f, &row, &err), LNC_ERANGE);
    char want[64];
    snprintf(want, sizeof want, "has %llu rows", (unsigned long long)nrows);
    ck_assert_msg(strstr(err.message, want), "%s", err.message);
    /* the public take reports the same range error */
    struct ArrowSchema s;
    struct ArrowArray a;
    uint64_t bad[2] = {0, nrows + 5};
    int rc = lnc_dataset_take(ds, bad, 2, NULL, 0, &s, &a, NULL, &err);
    ck_assert(rc == LNC_ERANGE || rc == LNC_EUNSUPPORTED);
    free(addr);
    lnc_dataset_close(ds);
  }
  free(text);
  return checked;
}

START_TEST(test_rowmap_vs_lance) {
  for (size_t i = 0; i < NFIX; i++) ck_assert_uint_gt(rowmap_check(FIX, FIXTURES[i].name), 0);
}
END_TEST

/* ---- takes by row id (row addresses) and the _rowid / _rowaddr pseudo-columns ----------- */
/* Every line of dir/name.rowaddr: taking Lance's row addresses of the live offsets (reversed,
 * one repeated) gives the rows the offsets give, which the conformance tests check against
 * Lance's takeOffsets, and _rowid / _rowaddr are those addresses; every physical row that is
 * not live, a row past a fragment's end and an unknown fragment are LNC_ENOTFOUND. */
static void rowid_check(const char *dir, const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s.rowaddr", dir, name);
  char *text = (char *)tsup_read_file(path, NULL);
  ck_assert_msg(text != NULL, "%s is missing", path);
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    char *fld[3];
    ck_assert(tsup_split_tabs(line, fld, 3));
    uint64_t version = strtoull(fld[0], NULL, 10);
    size_t n;
    uint64_t *addr = tsup_parse_ids(fld[2], &n);
    lnc_dataset *ds = open_in(dir, name, version);
    size_t m = n + (n > 0);
    uint64_t *offs = malloc((m ? m : 1) * sizeof *offs), *rids = malloc((m ? m : 1) * sizeof *rids);
    for (size_t i = 0; i < n; i++) offs[i] = n - 1 - i, rids[i] = addr[n - 1 - i];
    if (n) offs[n] = offs[0], rids[n] = rids[0];
    static const char *const cols_pseudo[] = {"_rowaddr", "_rowid"};
    struct lnc_take_options by_id = {.ids = LNC_IDS_ROW_IDS};
    struct ArrowSchema s1, s2, s3;
    struct ArrowArray a1, a2, a3;
    struct lnc_error err = {0};
    ck_assert_int_eq(lnc_dataset_take(ds, offs, m, NULL, 0, &s1, &a1, NULL, &err), 0);
    ck_assert_msg(lnc_dataset_take_ex(ds, rids, m, NULL, 0, &by_id, &s2, &a2, NULL, &err) == 0, "%s", err.message);
    char *j1 = tsup_json(&s1, &a1), *j2 = tsup_json(&s2, &a2);
    ck_assert_msg(!strcmp(j1, j2), "%s@%llu: rows by row id differ from rows by offset", name,
                  (unsigned long long)version);
    /* pseudo-columns, by offset and by row id, named twice: once each, after nothing else */
    static const char *const twice[] = {"_rowaddr", "_rowid", "_rowaddr"};
    for (int pass = 0; pass < 2; pass++) {
      ck_assert_int_eq(lnc_dataset_take_ex(ds, pass ? rids : offs, m, twice, 3, pass ? &by_id : NULL, &s3, &a3,
                                           NULL, &err),
                       0);
      ck_assert_int_eq(a3.n_children, 2);
      for (int c = 0; c < 2; c++) {
        ck_assert_str_eq(s3.children[c]->name, cols_pseudo[c]);
        ck_assert_str_eq(s3.children[c]->format, "L");
        const uint64_t *v = a3.children[c]->buffers[1];
        for (size_t i = 0; i < m; i++) ck_assert_uint_eq(v[i], rids[i]);
      }
      s3.release(&s3);
      a3.release(&a3);
    }
    /* not live: deleted rows, a row past a fragment's end, an unknown fragment */
    for (size_t f = 0; f < ds->nfrag; f++) {
      uint64_t fid = ds->frags[f].pb->id, phys = ds->frags[f].pb->physical_rows;
      for (uint64_t r = 0; r <= phys; r++) {
        uint64_t a = fid << 32 | r;
        bool live = false;
        for (size_t i = 0; i < n && !live; i++) live = addr[i] == a;
        if (live) continue;
        int rc = lnc_dataset_take_ex(ds, &a, 1, NULL, 0, &by_id, &s3, &a3, NULL, &err);
        ck_assert_msg(rc == LNC_ENOTFOUND, "%s@%llu: row id %llx gave %d", name, (unsigned long long)version,
                      (unsigned long long)a, rc);
        ck_assert_msg(strstr(err.message, r == phys ? "past" : "deleted"), "%s", err.message);
      }
    }
    uint64_t nofrag = (uint64_t)0xfffffff0 << 32;
    ck_assert_int_eq(lnc_dataset_take_ex(ds, &nofrag, 1, NULL, 0, &by_id, &s3, &a3, NULL, &err), LNC_ENOTFOUND);
    ck_assert_msg(strstr(err.message, "names no fragment"), "%s", err.message);
    free(j1);
    free(j2);
    s1.release(&s1);
    a1.release(&a1);
    s2.release(&s2);
    a2.release(&a2);
    free(offs);
    free(rids);
    free(addr);
    lnc_dataset_close(ds);
  }
  free(text);
}

START_TEST(test_take_by_row_id) {
  for (size_t i = 0; i < NFIX; i++) rowid_check(FIX, FIXTURES[i].name);
}
END_TEST

/* ---- damaged datasets ------------------------------------------------------------------ */
static char *tmpdir;

/* A fresh scratch dir holding a copy of the fixture as ds.lance. */
static void copy_fixture(const char *name) {
  tmpdir = tsup_mkdtemp("lnc-ds-test-");
  ck_assert_ptr_nonnull(tmpdir);
  tsup_ds_copy(name, tmpdir, "ds.lance");
}

static void cleanup_tmp(void) {
  tsup_sh("rm -rf %s", tmpdir);
  free(tmpdir);
  tmpdir = NULL;
}

static int open_tmp(uint64_t version, struct lnc_error *err) {
  char path[512];
  snprintf(path, sizeof path, "%s/ds.lance", tmpdir);
  lnc_dataset *ds = NULL;
  int rc = lnc_dataset_open(path, version, &ds, err);
  if (rc == 0)
    lnc_dataset_close(ds);
  else
    ck_assert_ptr_null(ds);
  return rc;
}

/* Runs cmd inside the copied dataset. */
static void sh(const char *cmd) { tsup_sh("cd %s/ds.lance && %s", tmpdir, cmd); }

START_TEST(test_torn_manifest) {
  copy_fixture("multi_v21");
  struct lnc_error err = {0};
  sh("truncate -s 100 _versions/3.manifest");
  ck_assert_int_eq(open_tmp(0, &err), LNC_ECORRUPT);
  ck_assert_msg(strstr(err.message, "3.manifest") && strstr(err.message, "LANC"), "%s",
                err.message);
  ck_assert_int_eq(open_tmp(2, &err), 0); /* older versions stay readable */
  sh("truncate -s 5 _versions/2.manifest");
  ck_assert_int_eq(open_tmp(2, &err), LNC_ECORRUPT);
  ck_assert_msg(strstr(err.message, "too short"), "%s", err.message);
  /* a manifest whose length prefix disagrees with the tail */
  sh("printf '\\377' | dd of=_versions/1.manifest bs=1 seek=$(( $(od -An -tu8 -j $(( $(stat -c %s _versions/1.manifest) - 16 )) -N8 _versions/1.manifest) + 1 )) conv=notrunc status=none");
  ck_assert_int_eq(open_tmp(1, &err), LNC_ECORRUPT);
  ck_assert_msg(strstr(err.message, "length"), "%s", err.message);
  cleanup_tmp();
}
END_TEST

START_TEST(test_missing_versions) {
  copy_fixture("multi_v21");
  struct lnc_error err = {0};
  sh("rm _versions/*.manifest");
  ck_assert_int_eq(open_tmp(0, &err), LNC_ECORRUPT); /* _versions/ without manifests: damaged */
  ck_assert_msg(strstr(err.message, "no manifests"), "%s", err.message);
  cleanup_tmp();
}
END_TEST

START_TEST(test_missing_data_file) {
  copy_fixture("multi_v22");
  struct lnc_error err = {0};
  sh("rm $(ls data/*.lance | head -1)");
  ck_assert_int_eq(open_tmp(0, &err), LNC_ECORRUPT); /* listed but absent: damaged */
  ck_assert_msg(strstr(err.message, "data file") && strstr(err.message, "data/"), "%s",
                err.message);
  cleanup_tmp();
}
END_TEST

START_TEST(test_bad_deletion_files) {
  copy_fixture("deletions_v22");
  struct lnc_error err = {0};
  sh("for f in _deletions/*.arrow; do head -c 40 $f > x && mv x $f; done");
  ck_assert_int_eq(open_tmp(0, &err), LNC_ECORRUPT);
  ck_assert_msg(strstr(err.message, "deletion file") && strstr(err.message, ".arrow"), "%s",
                err.message);
  cleanup_tmp();
  copy_fixture("deletions_v22");
  sh("for f in _deletions/*.bin; do printf 'garbage!' > $f; done");
  ck_assert_int_eq(open_tmp(0, &err), LNC_ECORRUPT);
  ck_assert_msg(strstr(err.message, ".bin") && strstr(err.message, "Roaring"), "%s",
                err.message);
  cleanup_tmp();
  copy_fixture("deletions_v22");
  sh("rm _deletions/*.bin");
  ck_assert_int_eq(open_tmp(0, &err), LNC_ECORRUPT);
  ck_assert_msg(strstr(err.message, "deletion file"), "%s", err.message);
  cleanup_tmp();
}
END_TEST

/* Rewrites version `v`'s manifest with reader_feature_flags |= flags. */
/* Rewrites manifest mname of the copied dataset with fn applied to its message. */
static void edit_manifest(const char *mname, void (*fn)(Lance__Table__Manifest *m, const void *arg), const void *arg) {
  char path[512];
  snprintf(path, sizeof path, "%s/ds.lance/_versions/%s", tmpdir, mname);
  tsup_edit_manifest(path, fn, arg);
}

static void or_flags(Lance__Table__Manifest *m, const void *arg) {
  m->reader_feature_flags |= *(const uint64_t *)arg;
}
static void set_flags(const char *mname, uint64_t flags) { edit_manifest(mname, or_flags, &flags); }

START_TEST(test_unknown_reader_flags) {
  copy_fixture("multi_v21");
  struct lnc_error err = {0};
  set_flags("3.manifest", 0);
  ck_assert_int_eq(open_tmp(3, &err), 0); /* re-framed manifest reads fine */
  set_flags("3.manifest", 64);
  ck_assert_int_eq(open_tmp(3, &err), LNC_EUNSUPPORTED);
  ck_assert_msg(strstr(err.message, "0x40") && strstr(err.message, "overlay"), "%s",
                err.message);
  set_flags("2.manifest", 16); /* base paths: read (a manifest that lists none is fine) */
  ck_assert_int_eq(open_tmp(2, &err), 0);
  set_flags("2.manifest", 128);
  ck_assert_int_eq(open_tmp(2, &err), LNC_EUNSUPPORTED);
  ck_assert_msg(strstr(err.message, "0x80"), "%s", err.message);
  cleanup_tmp();
}
END_TEST

/* ---- tags: _refs/tags/<name>.json ---------------------------------------------------------- */
START_TEST(test_tags_vs_lance) {
  /* Lance's own list: one tag moved after it was made, one not ASCII, one all digits. */
  char *tags[16];
  uint64_t want[16];
  size_t n = tsup_ds_tags("tags_v22", tags, want, 16);
  ck_assert_uint_ge(n, 5);
  for (size_t i = 0; i < n; i++) {
    uint64_t v = 0;
    struct lnc_error err = {0};
    ck_assert_msg(lnc_dataset_tag(FIX "/tags_v22.lance", tags[i], &v, &err) == 0, "%s", err.message);
    ck_assert_uint_eq(v, want[i]);
    free(tags[i]);
  }
  struct lnc_error err = {0};
  uint64_t v = 0;
  ck_assert_int_eq(lnc_dataset_tag(FIX "/tags_v22.lance", "nope", &v, &err), LNC_ENOTFOUND);
  ck_assert_msg(strstr(err.message, "no tag 'nope'"), "%s", err.message);
  ck_assert_int_eq(lnc_dataset_tag(FIX "/multi_v22.lance", "first", &v, &err), LNC_ENOTFOUND); /* no _refs/ */
  ck_assert_int_eq(lnc_dataset_tag(FIX "/no_such.lance", "first", &v, &err), LNC_ENOTFOUND);
  /* Names Lance refuses for a ref never reach the file system. */
  const char *bad[] = {"", "../x", "a/b", ".a", "a.", "a..b", "x.lock", "a b", "a%2Fb"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    ck_assert_msg(lnc_dataset_tag(FIX "/tags_v22.lance", bad[i], &v, &err) == LNC_EINVAL, "'%s'", bad[i]);
  ck_assert(lnc_ds_tag_name_ok("v1.2-rc_3") && lnc_ds_tag_name_ok("donn\xc3\xa9"
                                                                  "es"));
}
END_TEST

static int tag_parse(const char *json, uint64_t *v, struct lnc_error *err) {
  return lnc_ds_tag_parse((const uint8_t *)json, strlen(json), "t.json", v, err);
}

START_TEST(test_tag_files_parsed) {
  uint64_t v = 0;
  struct lnc_error err = {0};
  /* As Lance 10.0.0 writes it, and with keys reordered, fields added, nested values. */
  ck_assert_int_eq(tag_parse("{\n  \"branch\": null,\n  \"version\": 3,\n  \"createdAt\": \"2026-11-26T07:03:36Z\","
                             "\n  \"manifestSize\": 367,\n  \"metadata\": {}\n}",
                             &v, &err),
                   0);
  ck_assert_uint_eq(v, 3);
  ck_assert_int_eq(tag_parse("{\"metadata\":{\"a\":[1,{\"b\":\"}\\\"]\"}],\"c\":true},\"version\":18446744073709551615}", &v,
                             &err),
                   0);
  ck_assert_uint_eq(v, UINT64_MAX);
  ck_assert_int_eq(tag_parse("{\"version\":7,\"manifestSize\":1}", &v, &err), 0);
  ck_assert_uint_eq(v, 7);
  /* Another branch's version: not served. */
  ck_assert_int_eq(tag_parse("{\"branch\":\"dev\",\"version\":2}", &v, &err), LNC_EUNSUPPORTED);
  ck_assert_msg(strstr(err.message, "branch"), "%s", err.message);
  /* Not tag files. */
  const char *bad[] = {"", "[]", "{", "{\"version\":0}", "{\"version\":-1}", "{\"version\":\"3\"}",
                       "{\"version\":18446744073709551616}", "{\"branch\":null}", "{\"version\":3",
                       "{\"version\" 3}", "{\"a\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]],\"version\":1}",
                       "{\"a\":\"unterminated}", "{\"version\":3}}x"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    int rc = tag_parse(bad[i], &v, &err);
    ck_assert_msg(rc == LNC_ECORRUPT, "'%s': %d", bad[i], rc);
  }
  /* A NUL where a value goes, inside a skipped one: the skip looped for ever (fuzz_manifest). */
  static const uint8_t nul[] = "{\"m\":[1,\0],\"version\":2}";
  ck_assert_int_eq(lnc_ds_tag_parse(nul, sizeof nul - 1, "t.json", &v, &err), LNC_ECORRUPT);
}
END_TEST

START_TEST(test_open_fd) {
  int dfd = open(FIX, O_RDONLY | O_DIRECTORY);
  ck_assert_int_ge(dfd, 0);
  lnc_dataset *ds = NULL;
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_dataset_open_fd(dfd, "compacted_v22.lance", 6, &ds, &err), 0);
  ck_assert_uint_eq(lnc_dataset_version(ds), 6);
  ck_assert_uint_eq(ds->nfrag, 5);
  lnc_dataset_close(ds);
  ck_assert_int_eq(lnc_dataset_open_fd(dfd, "compacted_v22.lance", 0, &ds, &err), 0);
  ck_assert_uint_eq(ds->nfrag, 1); /* optimize rewrote the fragments into one */
  ck_assert_ptr_null(ds->frags[0].pb->deletion_file);
  ck_assert_uint_eq(lnc_dataset_num_rows(ds), 400);
  lnc_dataset_close(ds);
  close(dfd);
}
END_TEST

/* ---- take vs Lance's takeOffsets ------------------------------------------------------- */
/* Every line of dir/name.answers: the take of its ids at its version equals Lance's rows.
 * Returns the takes compared. */
static int answers_check(const char *dir, const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s.answers", dir, name);
  char *text = (char *)tsup_read_file(path, NULL);
  ck_assert_msg(text != NULL, "%s is missing", path);
  lnc_dataset *ds = NULL;
  uint64_t dsv = UINT64_MAX;
  char *save = NULL;
  int compared = 0;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *fld[3]; /* ids, version, rows body */
    ck_assert(tsup_split_tabs(line, fld, 3));
    uint64_t version = strtoull(fld[1], NULL, 10);
    if (version != dsv) {
      lnc_dataset_close(ds);
      ds = open_in(dir, name, version);
      dsv = version;
    }
    size_t n;
    uint64_t *ids = tsup_parse_ids(line, &n);
    struct ArrowSchema s;
    struct ArrowArray a;
    struct lnc_error err = {0};
    int rc = lnc_dataset_take(ds, ids, n, NULL, 0, &s, &a, NULL, &err);
    ck_assert_msg(rc == 0, "%s %s@%llu: %s", name, line, (unsigned long long)version, err.message);
    char *got = tsup_json(&s, &a), msg[600];
    ck_assert_msg(tsup_body_eq(fld[2], strlen(fld[2]), got, strlen(got), msg, sizeof msg), "%s ids %s @%llu: %s",
                  name, line, (unsigned long long)version, msg);
    compared++;
    free(got);
    a.release(&a);
    s.release(&s);
    free(ids);
  }
  lnc_dataset_close(ds);
  free(text);
  return compared;
}

START_TEST(test_take_vs_lance) {
  int compared = 0;
  for (size_t i = 0; i < NFIX; i++) compared += answers_check(FIX, FIXTURES[i].name);
  ck_assert_int_gt(compared, 100);
}
END_TEST

/* ---- shallow clones: files below base paths ---------------------------------------------- */
START_TEST(test_clone_vs_lance) {
  for (size_t i = 0; i < tsup_n_clone_fixtures; i++) {
    const char *name = tsup_clone_fixtures[i].name;
    lnc_dataset *ds = open_in(TSUP_CLONE_DIR, name, 0);
    ck_assert_uint_eq(lnc_dataset_version(ds), tsup_clone_fixtures[i].latest);
    ck_assert_uint_eq(ds->nbases, strncmp(name, "clone2", 6) ? 1 : 2);
    size_t based = 0, own = 0;
    for (size_t f = 0; f < ds->nfrag; f++)
      for (size_t j = 0; j < ds->frags[f].nfiles; j++)
        ds->frags[f].files[j].pb->base_case ? based++ : own++;
    /* The clones' latest versions hold both the source's files and files written since;
     * clone2 (a clone and a delete) only files below its two bases. */
    ck_assert_msg(based && (own || !strncmp(name, "clone2", 6)), "%s: %zu files below a base path, %zu its own",
                  name, based, own);
    lnc_dataset_close(ds);
    ck_assert_int_gt(answers_check(TSUP_CLONE_DIR, name), 10);
    ck_assert_uint_gt(rowmap_check(TSUP_CLONE_DIR, name), 0);
  }
}
END_TEST

struct base_edit {
  const char *path;  /* base path 0's new path, or NULL */
  int root;          /* base path 0's is_dataset_root: 0, 1, or -1 kept */
  int64_t file_base; /* the first data file's base id, or -1 kept */
  bool twice;        /* base path 0 listed twice */
  int unused;        /* base paths no file names added (ids 100..), path "/nonexistent-lanced" */
};
static void edit_bases(Lance__Table__Manifest *m, const void *arg) {
  const struct base_edit *e = arg;
  ck_assert_uint_ge(m->n_base_paths, 1);
  Lance__Table__BasePath *b = m->base_paths[0];
  if (e->path) { /* the message is freed by free_unpacked: everything in it malloc'd */
    free(b->path);
    b->path = strdup(e->path);
  }
  if (e->root >= 0) b->is_dataset_root = e->root;
  if (e->file_base >= 0) {
    m->fragments[0]->files[0]->base_case = LANCE__TABLE__DATA_FILE__BASE_BASE_ID;
    m->fragments[0]->files[0]->base_id = (uint32_t)e->file_base;
  }
  if (e->unused) {
    size_t n0 = m->n_base_paths;
    m->base_paths = realloc(m->base_paths, (n0 + (size_t)e->unused) * sizeof *m->base_paths);
    for (int k = 0; k < e->unused; k++) {
      Lance__Table__BasePath *x = malloc(sizeof *x);
      lance__table__base_path__init(x);
      x->id = 100 + (uint32_t)k;
      x->path = strdup("/nonexistent-lanced/src.lance");
      x->name = strdup("");
      x->is_dataset_root = true;
      m->base_paths[n0 + (size_t)k] = x;
    }
    m->n_base_paths = n0 + (size_t)e->unused;
  }
  if (e->twice) {
    Lance__Table__BasePath *b2 = malloc(sizeof *b2);
    lance__table__base_path__init(b2);
    b2->id = b->id;
    b2->path = strdup(b->path);
    b2->name = strdup("");
    m->base_paths = realloc(m->base_paths, 2 * sizeof *m->base_paths);
    m->base_paths[1] = b2;
    m->n_base_paths = 2;
  }
}

/* clone_v22 copied to scratch, manifest `mname` edited: the open answers want_rc and a
 * message holding want. */
static void clone_case(const char *mname, uint64_t version, struct base_edit e, int want_rc, const char *want) {
  tmpdir = tsup_mkdtemp("lnc-clone-test-");
  ck_assert_ptr_nonnull(tmpdir);
  tsup_sh("cp -r %s/clone_v22.lance %s/ds.lance", TSUP_CLONE_DIR, tmpdir);
  edit_manifest(mname, edit_bases, &e);
  struct lnc_error err = {0};
  lnc_dataset *ds = NULL;
  char path[512];
  snprintf(path, sizeof path, "%s/ds.lance", tmpdir);
  int rc = lnc_dataset_open(path, version, &ds, &err);
  ck_assert_msg(rc == want_rc, "%s: rc %d, want %d: %s", e.path ? e.path : "-", rc, want_rc, err.message);
  if (want) ck_assert_msg(strstr(err.message, want), "want '%s' in: %s", want, err.message);
  if (!rc) {
    uint64_t ids[3] = {0, 299, lnc_dataset_num_rows(ds) - 1};
    struct ArrowSchema s;
    struct ArrowArray a;
    ck_assert_int_eq(lnc_dataset_take(ds, ids, 3, NULL, 0, &s, &a, NULL, &err), 0);
    a.release(&a);
    s.release(&s);
  }
  lnc_dataset_close(ds);
  cleanup_tmp();
}

START_TEST(test_clone_base_paths_checked) {
  /* clone_v22: version 8 (latest; the source's data files, the clone's deletion files) and 5
   * (the clone as made: the source's deletion files too). */
  const char *v8 = "18446744073709551607.manifest", *v5 = "18446744073709551610.manifest";
  char abs[4096], alt[4200];
  ck_assert_ptr_nonnull(realpath(TSUP_CLONE_DIR "/clonesrc_v22.lance", abs));
  const struct base_edit keep = {NULL, -1, -1, false, 0};
  clone_case(v8, 0, keep, 0, NULL);
  clone_case(v5, 5, keep, 0, NULL);
  /* Spellings of the same path that Lance reads: a file:// URL (percent-encoded too), dot
   * and empty components, ".." taken lexically. */
  snprintf(alt, sizeof alt, "file://%s", abs);
  clone_case(v5, 5, (struct base_edit){alt, -1, -1, false, 0}, 0, NULL);
  snprintf(alt, sizeof alt, "file://localhost%s", abs);
  clone_case(v5, 5, (struct base_edit){alt, -1, -1, false, 0}, 0, NULL);
  char *last = strrchr(abs, '/');
  snprintf(alt, sizeof alt, "file://%.*s/%%63%s", (int)(last - abs), abs, last + 2); /* "%63" is 'c' */
  clone_case(v5, 5, (struct base_edit){alt, -1, -1, false, 0}, 0, NULL);
  snprintf(alt, sizeof alt, "/%s//./", abs);
  clone_case(v5, 5, (struct base_edit){alt, -1, -1, false, 0}, 0, NULL);
  snprintf(alt, sizeof alt, "%s/../clonesrc_v22.lance", abs);
  clone_case(v8, 0, (struct base_edit){alt, -1, -1, false, 0}, 0, NULL);
  /* Base paths no file names are not opened: a clone compacted away from its source reads
   * without it. */
  clone_case(v8, 0, (struct base_edit){NULL, -1, -1, false, 3}, 0, NULL);
  /* The source gone, or never a path. */
  clone_case(v8, 0, (struct base_edit){"/nonexistent-lanced-test/src.lance", -1, -1, false, 0}, LNC_ECORRUPT,
             "/nonexistent-lanced-test/src.lance");
  clone_case(v8, 0, (struct base_edit){"clonesrc_v22.lance", -1, -1, false, 0}, LNC_ECORRUPT, "not an absolute");
  clone_case(v8, 0, (struct base_edit){"file://elsewhere/src.lance", -1, -1, false, 0}, LNC_ECORRUPT,
             "not an absolute");
  clone_case(v8, 0, (struct base_edit){"", -1, -1, false, 0}, LNC_ECORRUPT, "has no path");
  clone_case(v8, 0, (struct base_edit){"s3://bucket/src.lance", -1, -1, false, 0}, LNC_EUNSUPPORTED, "mount");
  clone_case(v8, 0, (struct base_edit){"gs://bucket/src.lance", -1, -1, false, 0}, LNC_EUNSUPPORTED, "store");
  char *longp = malloc(5000);
  memset(longp, 'a', 4999);
  longp[0] = '/';
  longp[4999] = 0;
  clone_case(v8, 0, (struct base_edit){longp, -1, -1, false, 0}, LNC_ECORRUPT, "4999 bytes");
  free(longp);
  /* Ids: one no base has, one listed twice, more bases than lanced reads. */
  clone_case(v8, 0, (struct base_edit){NULL, -1, 7, false, 0}, LNC_ECORRUPT, "names base path 7");
  clone_case(v8, 0, (struct base_edit){NULL, -1, -1, true, 0}, LNC_ECORRUPT, "listed twice");
  clone_case(v8, 0, (struct base_edit){NULL, -1, -1, false, 64}, LNC_ELIMIT, "65 base paths");
  /* Not a dataset root: data files directly below it (so not found here), and no
   * _deletions/ for the deletion files that name it. */
  clone_case(v8, 0, (struct base_edit){NULL, 0, -1, false, 0}, LNC_ECORRUPT, "below base path 0");
  clone_case(v5, 5, (struct base_edit){NULL, 0, -1, false, 0}, LNC_ECORRUPT, "not a dataset");
}
END_TEST

static char *take_json(lnc_dataset *ds, const uint64_t *ids, size_t n, const char *const *cols,
                       size_t ncols) {
  struct ArrowSchema s;
  struct ArrowArray a;
  struct lnc_error err = {0};
  int rc = lnc_dataset_take(ds, ids, n, cols, ncols, &s, &a, NULL, &err);
  ck_assert_msg(rc == 0, "%s", err.message);
  char *out = tsup_json(&s, &a);
  a.release(&a);
  s.release(&s);
  return out;
}

START_TEST(test_take_columns) {
  lnc_dataset *ds = open_ok("addcol_v22", 0);
  uint64_t ids[] = {0, 200, 0};
  const char *cols[] = {"y", "id"};
  char *j = take_json(ds, ids, 3, cols, 2);
  ck_assert_str_eq(j, "{\"num_rows\":3,\"columns\":[\"y\",\"id\"],\"rows\":[{\"y\":1,\"id\":0},"
                      "{\"y\":661,\"id\":220},{\"y\":1,\"id\":0}]}");
  free(j);
  j = take_json(ds, ids, 0, cols, 1);
  ck_assert_str_eq(j, "{\"num_rows\":0,\"columns\":[\"y\"],\"rows\":[]}");
  free(j);
  const char *bad[] = {"nope"};
  struct ArrowSchema s;
  struct ArrowArray a;
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_dataset_take(ds, ids, 1, bad, 1, &s, &a, NULL, &err), LNC_EINVAL);
  ck_assert_msg(strstr(err.message, "nope"), "%s", err.message);
  lnc_dataset_close(ds);
}
END_TEST

/* Renamed, dropped and re-added columns (renamed_v2x: x and s swapped names, st.a became
 * st.alpha, l was dropped and added again as an int64, st.c dropped): the data files still
 * carry the names and fields they were written with, which is what makes the fixture a test
 * of matching by field id. */
static void check_file_field(const char *ds_name, const char *data_path, const char *name,
                             const char *format) {
  char path[512];
  snprintf(path, sizeof path, FIX "/%s.lance/data/%s", ds_name, data_path);
  lnc_file *f = NULL;
  struct lnc_error err = {0};
  ck_assert_msg(lnc_file_open(path, &f, &err) == 0, "%s: %s", path, err.message);
  struct ArrowSchema s;
  ck_assert_int_eq(lnc_file_schema(f, &s, &err), 0);
  int found = 0;
  for (int64_t i = 0; i < s.n_children; i++)
    if (strcmp(s.children[i]->name, name) == 0) {
      ck_assert_str_eq(s.children[i]->format, format);
      found = 1;
    }
  ck_assert_msg(found, "%s has no field '%s'", path, name);
  s.release(&s);
  lnc_file_close(f);
}

START_TEST(test_take_renamed) {
  const char *names[] = {"renamed_v20", "renamed_v21", "renamed_v22"};
  for (int t = 0; t < 3; t++) {
    lnc_dataset *ds = open_ok(names[t], 0);
    /* The first fragment's file: x is still the float64, s the strings; l the old list. */
    check_file_field(names[t], ds->frags[0].pb->files[0]->path, "x", "g");
    check_file_field(names[t], ds->frags[0].pb->files[0]->path, "s", "u");
    check_file_field(names[t], ds->frags[0].pb->files[0]->path, "l", "+l");
    uint64_t ids[] = {0, 400, 0};
    const char *cols[] = {"x", "st.alpha", "l"};
    char *j = take_json(ds, ids, 3, cols, 3);
    ck_assert_str_eq(j, "{\"num_rows\":3,\"columns\":[\"x\",\"st\",\"l\"],\"rows\":["
                        "{\"x\":\"row-0-1vuf\",\"st\":{\"alpha\":-427497},\"l\":-7},"
                        "{\"x\":\"row-433-bwv5\",\"st\":{\"alpha\":-173881},\"l\":859},"
                        "{\"x\":\"row-0-1vuf\",\"st\":{\"alpha\":-427497},\"l\":-7}]}");
    free(j);
    j = take_json(ds, ids, 1, (const char *[]){"st"}, 1); /* without the dropped st.c */
    ck_assert_str_eq(j, "{\"num_rows\":1,\"columns\":[\"st\"],\"rows\":[{\"st\":{\"alpha\":-427497,\"b\":\"b0\"}}]}");
    free(j);
    const char *old[] = {"st.a"};
    struct ArrowSchema s;
    struct ArrowArray a;
    struct lnc_error err = {0};
    ck_assert_int_eq(lnc_dataset_take(ds, ids, 1, old, 1, &s, &a, NULL, &err), LNC_EINVAL);
    ck_assert_msg(strstr(err.message, "unknown column 'st.a'"), "%s", err.message);
    lnc_dataset_close(ds);
    /* Before the renames the old names read the same values. */
    ds = open_ok(names[t], 2);
    j = take_json(ds, ids, 1, (const char *[]){"x", "st.a"}, 2);
    ck_assert_str_eq(j, "{\"num_rows\":1,\"columns\":[\"x\",\"st\"],\"rows\":[{\"x\":-854.452,\"st\":{\"a\":-427497}}]}");
    free(j);
    lnc_dataset_close(ds);
  }
}
END_TEST

/* Struct children spread over data files (subcol_v22: st.z, later renamed zz, and st.in.q added
 * by addColumns of a named_struct into st, each written to a new data file of every fragment;
 * st.w added with no data): only such a struct is flagged at open, its pieces are merged as
 * Lance merges them, and projections read only the files holding what they ask for. */
START_TEST(test_take_spread) {
  lnc_dataset *ds = open_ok("subcol_v22", 2); /* before any sub-column: one file each */
  ck_assert_uint_eq(ds->nspread, 0);
  uint64_t ids[] = {1, 10};
  char *j = take_json(ds, ids, 2, NULL, 0);
  ck_assert_str_eq(j, "{\"num_rows\":2,\"columns\":[\"id\",\"st\"],\"rows\":[{\"id\":1,\"st\":{\"a\":1,\"b\":\"b1\",\"in\":{\"p\":10}}},"
                      "{\"id\":10,\"st\":null}]}");
  free(j);
  lnc_dataset_close(ds);
  /* After the first sub-column: st of row 10 was null, and the new piece is valid there, so
   * Lance reads a struct of nulls with z set. */
  ds = open_ok("subcol_v22", 3);
  ck_assert_uint_eq(ds->nspread, 1);
  ck_assert(lnc_ds_spread_is(ds, 1) && !lnc_ds_spread_is(ds, 0));
  j = take_json(ds, ids, 2, NULL, 0);
  ck_assert_str_eq(j, "{\"num_rows\":2,\"columns\":[\"id\",\"st\"],\"rows\":[{\"id\":1,\"st\":{\"a\":1,\"b\":\"b1\",\"in\":{\"p\":10},\"z\":3}},"
                      "{\"id\":10,\"st\":{\"a\":null,\"b\":null,\"in\":null,\"z\":30}}]}");
  free(j);
  lnc_dataset_close(ds);
  /* Latest: offsets 1, 10 and 120 are ids 1, 12 (frag 0: three data files) and 144 (frag 2:
   * written whole). One-file projections, the nested piece, and a child without data. */
  ds = open_ok("subcol_v22", 0);
  uint64_t three[] = {1, 10, 120};
  j = take_json(ds, three, 3, (const char *[]){"st.zz", "id"}, 2);
  ck_assert_str_eq(j, "{\"num_rows\":3,\"columns\":[\"st\",\"id\"],\"rows\":[{\"st\":{\"zz\":3},\"id\":1},"
                      "{\"st\":{\"zz\":36},\"id\":12},{\"st\":{\"zz\":432},\"id\":144}]}");
  free(j);
  j = take_json(ds, three, 3, (const char *[]){"st.in"}, 1);
  ck_assert_str_eq(j, "{\"num_rows\":3,\"columns\":[\"st\"],\"rows\":[{\"st\":{\"in\":{\"p\":10,\"q\":\"q1\"}}},"
                      "{\"st\":{\"in\":{\"p\":120,\"q\":\"q12\"}}},{\"st\":{\"in\":{\"p\":1440,\"q\":\"n144\"}}}]}");
  free(j);
  /* st.w: no data file of fragment 0 holds it, so there st is Lance's all-null piece. */
  j = take_json(ds, three, 3, (const char *[]){"st.w"}, 1);
  ck_assert_str_eq(j, "{\"num_rows\":3,\"columns\":[\"st\"],\"rows\":[{\"st\":null},{\"st\":null},{\"st\":{\"w\":-144}}]}");
  free(j);
  lnc_dataset_close(ds);
  /* Structs held whole by one data file are not flagged (renamed_v22's st lost a child to a
   * drop; nodata_v22's ws has no data in the older fragments). */
  const char *whole[] = {"renamed_v22", "nodata_v22", "renamed_v20", "multi_v22"};
  for (int i = 0; i < 4; i++) {
    ds = open_ok(whole[i], 0);
    ck_assert_msg(ds->nspread == 0, "%s: %zu spread", whole[i], ds->nspread);
    lnc_dataset_close(ds);
  }
}
END_TEST

struct thr_arg {
  lnc_dataset *ds;
  int ok;
};

static void *thr_take(void *p) {
  struct thr_arg *t = p;
  uint64_t ids[64];
  for (int r = 0; r < 50; r++) {
    for (int i = 0; i < 64; i++) ids[i] = (uint64_t)(i * 97 + r * 13) % lnc_dataset_num_rows(t->ds);
    struct ArrowSchema s;
    struct ArrowArray a;
    struct lnc_error err = {0};
    if (lnc_dataset_take(t->ds, ids, 64, NULL, 0, &s, &a, NULL, &err) != 0) return NULL;
    a.release(&a);
    s.release(&s);
  }
  t->ok = 1;
  return NULL;
}

/* lnc_take_options.max_bytes refuses only answers that must exceed it, measured as Arrow
 * lays them out: 9,000 rows of a dictionary column are 9,000 small indices and one
 * dictionary, not 9,000 decoded strings (a first version counted the strings and refused a
 * 25 KB answer against a 60 KB limit); many copies of one large row are refused before they
 * are built, in a file take and in a dataset take. */
START_TEST(test_take_max_bytes) {
  char *path = tsup_fixture_file("dict21");
  ck_assert_ptr_nonnull(path);
  lnc_file *f = NULL;
  struct lnc_error err = {0};
  ck_assert_msg(lnc_file_open(path, &f, &err) == 0, "%s", err.message);
  size_t n = 9000;
  uint64_t *ids = malloc(n * sizeof *ids);
  for (size_t i = 0; i < n; i++) ids[i] = i % lnc_file_num_rows(f);
  const char *col[] = {"d_i16"};
  struct lnc_take_options o = {.max_bytes = 60000};
  struct ArrowSchema s;
  struct ArrowArray a;
  ck_assert_msg(lnc_take_ex(f, ids, n, col, 1, &o, &s, &a, NULL, &err) == 0, "%s", err.message);
  struct lnc_buf ipc = {0};
  ck_assert_int_eq(lnc_encode_arrow_ipc(&s, &a, &ipc, &err), 0);
  ck_assert_uint_lt(ipc.len, 60000);
  lnc_buf_free(&ipc);
  a.release(&a);
  s.release(&s);
  o.max_bytes = 1000;
  ck_assert_int_eq(lnc_take_ex(f, ids, n, col, 1, &o, &s, &a, NULL, &err), LNC_ELIMIT);
  ck_assert_msg(strstr(err.message, LNC_TAKE_LIMIT_TEXT), "%s", err.message);
  lnc_file_close(f);
  free(path);

  lnc_dataset *ds = NULL;
  ck_assert_msg(lnc_dataset_open("tests/fixtures/data/dict21", 0, &ds, &err) == 0, "%s", err.message);
  o.max_bytes = 60000;
  ck_assert_msg(lnc_dataset_take_ex(ds, ids, n, col, 1, &o, &s, &a, NULL, &err) == 0, "%s", err.message);
  a.release(&a);
  s.release(&s);
  for (size_t i = 0; i < n; i++) ids[i] = 3; /* one row, 9,000 times, every column: 6+ bytes each */
  o.max_bytes = 20000;
  ck_assert_int_eq(lnc_dataset_take_ex(ds, ids, n, NULL, 0, &o, &s, &a, NULL, &err), LNC_ELIMIT);
  ck_assert_msg(strstr(err.message, "9000 rows asked for"), "%s", err.message);
  lnc_dataset_close(ds);
  free(ids);
}
END_TEST

/* A take over max_bytes stops when what it has decoded or read crosses the limit, not after
 * decoding everything: distinct rows are each in the answer at least once. Two columns of
 * fzrep21 (one full-zip page each): refused after the first, the second is never decoded.
 * The blob column of enc21: its bytes are read one blob at a time, and the reads stop at the
 * limit. */
static int take_stats(const char *fixture, const char *const *cols, size_t ncols, size_t n, uint64_t max_bytes,
                      struct lnc_take_stats *st, struct lnc_error *err) {
  char *path = tsup_fixture_file(fixture);
  ck_assert_ptr_nonnull(path);
  lnc_file *f = NULL;
  ck_assert_msg(lnc_file_open(path, &f, err) == 0, "%s", err->message);
  uint64_t *ids = malloc(n * sizeof *ids);
  for (size_t i = 0; i < n; i++) ids[i] = i;
  struct lnc_take_options o = {.max_bytes = max_bytes};
  struct ArrowSchema s;
  struct ArrowArray a;
  memset(st, 0, sizeof *st);
  int rc = lnc_take_ex(f, ids, n, cols, ncols, &o, &s, &a, st, err);
  if (rc == 0) {
    a.release(&a);
    s.release(&s);
  }
  free(ids);
  lnc_file_close(f);
  free(path);
  return rc;
}

START_TEST(test_take_max_bytes_stops_early) {
  struct lnc_take_stats all, capped;
  struct lnc_error err = {0};
  const char *two[] = {"lls", "lemb"};
  ck_assert_int_eq(take_stats("fzrep21", two, 2, 600, 0, &all, &err), 0);
  ck_assert_int_eq(take_stats("fzrep21", two, 2, 600, 2000, &capped, &err), LNC_ELIMIT);
  ck_assert_msg(strstr(err.message, LNC_TAKE_LIMIT_TEXT), "%s", err.message);
  ck_assert_msg(capped.bytes_decoded < all.bytes_decoded / 2, "decoded %llu of %llu bytes",
                (unsigned long long)capped.bytes_decoded, (unsigned long long)all.bytes_decoded);
  const char *blob[] = {"blob"};
  ck_assert_int_eq(take_stats("enc21", blob, 1, 40, 0, &all, &err), 0);
  ck_assert_int_eq(take_stats("enc21", blob, 1, 40, 2000, &capped, &err), LNC_ELIMIT);
  ck_assert_msg(strstr(err.message, LNC_TAKE_LIMIT_TEXT), "%s", err.message);
  ck_assert_msg(capped.reads * 2 < all.reads, "%llu reads of %llu", (unsigned long long)capped.reads,
                (unsigned long long)all.reads);

  /* A dataset: 10 rows of fragment 0 and all of fragments 1 and 2, each fragment's part under
   * the limit, together over it. The third fragment's take gets only what is left. */
  lnc_dataset *ds = open_ok("multi_v21", 0);
  size_t n = 0;
  uint64_t ids[460];
  for (uint64_t i = 0; i < 10; i++) ids[n++] = i;
  for (uint64_t i = 300; i < 750; i++) ids[n++] = i;
  const char *sl[] = {"s", "l"};
  struct ArrowSchema sch;
  struct ArrowArray arr;
  memset(&all, 0, sizeof all);
  ck_assert_int_eq(lnc_dataset_take_ex(ds, ids, n, sl, 2, NULL, &sch, &arr, &all, &err), 0);
  arr.release(&arr);
  sch.release(&sch);
  struct lnc_take_options o = {.max_bytes = 8000};
  memset(&capped, 0, sizeof capped);
  ck_assert_int_eq(lnc_dataset_take_ex(ds, ids, n, sl, 2, &o, &sch, &arr, &capped, &err), LNC_ELIMIT);
  ck_assert_msg(strstr(err.message, "460 rows asked for hold over 8000 bytes"), "%s", err.message);
  ck_assert_msg(capped.bytes_decoded < all.bytes_decoded, "decoded %llu of %llu bytes",
                (unsigned long long)capped.bytes_decoded, (unsigned long long)all.bytes_decoded);
  lnc_dataset_close(ds);
}
END_TEST

/* Fixture <name> as a data file, and as the dataset holding it (tests/fixtures/data/<name>). */
static void open_both(const char *name, lnc_file **f, lnc_dataset **ds) {
  char *path = tsup_fixture_file(name), dir[256];
  ck_assert_ptr_nonnull(path);
  struct lnc_error err = {0};
  ck_assert_msg(lnc_file_open(path, f, &err) == 0, "%s", err.message);
  free(path);
  snprintf(dir, sizeof dir, "tests/fixtures/data/%s", name);
  ck_assert_msg(lnc_dataset_open(dir, 0, ds, &err) == 0, "%s", err.message);
}

/* A legacy blob's value as bytes is null exactly where Lance's descriptor says null (size 0
 * at a position other than 0: the 2.0 writer stores a null so, and Lance's reader answers
 * null), an empty value where the descriptor is (0, 0), and otherwise its size in bytes. In
 * 2.0 lanced served a null as "" (2.1's blob layout already folded it into levels). */
START_TEST(test_legacy_blob_nulls) {
  const char *fx = _i ? "enc21" : "enc20";
  char *path = tsup_fixture_file(fx);
  lnc_file *f = NULL;
  struct lnc_error err = {0};
  ck_assert_msg(lnc_file_open(path, &f, &err) == 0, "%s", err.message);
  uint64_t ids[60];
  for (int i = 0; i < 60; i++) ids[i] = (uint64_t)(i * 7 % 60);
  const char *cols[] = {"blob"};
  json_t *rows[2];
  for (int mode = 0; mode < 2; mode++) {
    struct lnc_take_options o = {.blobs = mode ? LNC_BLOBS_DESCRIPTORS : LNC_BLOBS_BYTES, .max_bytes = 1 << 24};
    struct ArrowSchema s;
    struct ArrowArray a;
    ck_assert_msg(lnc_take_ex(f, ids, 60, cols, 1, &o, &s, &a, NULL, &err) == 0, "%s", err.message);
    char *j = tsup_json(&s, &a);
    json_t *doc = json_loads(j, 0, NULL);
    ck_assert_ptr_nonnull(doc);
    rows[mode] = json_incref(json_object_get(doc, "rows"));
    json_decref(doc);
    free(j);
    a.release(&a);
    s.release(&s);
  }
  int nulls = 0, empties = 0;
  for (size_t i = 0; i < 60; i++) {
    json_t *desc = json_object_get(json_array_get(rows[1], i), "blob");
    json_t *val = json_object_get(json_array_get(rows[0], i), "blob");
    json_int_t pos = json_integer_value(json_object_get(desc, "position"));
    json_int_t size = json_integer_value(json_object_get(desc, "size"));
    if (json_is_null(desc) || (size == 0 && pos != 0)) { /* 2.1 answers a null descriptor as null */
      ck_assert_msg(json_is_null(val), "%s row %zu: a null descriptor (%lld, 0) served as a value", fx, i, (long long)pos);
      nulls++;
    } else {
      ck_assert_msg(json_is_string(val), "%s row %zu: descriptor (%lld, %lld) served as null", fx, i, (long long)pos,
                    (long long)size);
      empties += size == 0;
    }
  }
  ck_assert_int_gt(nulls, 0); /* the fixture has both, or the test shows nothing */
  ck_assert_int_gt(empties, 0);
  json_decref(rows[0]);
  json_decref(rows[1]);
  lnc_file_close(f);
  free(path);
}
END_TEST

/* Blob v2 descriptors through a dataset: their fields have no ids of their own (-1), and the
 * dataset take once left them out as "dropped from the manifest", which crashed lanced on
 * GET ...enc22/rows?blobs=descriptors. The dataset's answer equals the file's. */
START_TEST(test_take_blob_descriptors) {
  lnc_file *f = NULL;
  lnc_dataset *ds = NULL;
  struct lnc_error err = {0};
  open_both("enc22", &f, &ds);
  uint64_t ids[] = {0, 1, 2, 1};
  struct lnc_take_options o = {.blobs = LNC_BLOBS_DESCRIPTORS, .max_bytes = 1 << 20};
  for (int mode = 0; mode < 2; mode++) {
    o.blobs = mode ? LNC_BLOBS_DESCRIPTORS : LNC_BLOBS_BYTES;
    struct ArrowSchema s1, s2;
    struct ArrowArray a1, a2;
    ck_assert_msg(lnc_take_ex(f, ids, 4, NULL, 0, &o, &s1, &a1, NULL, &err) == 0, "%s", err.message);
    ck_assert_msg(lnc_dataset_take_ex(ds, ids, 4, NULL, 0, &o, &s2, &a2, NULL, &err) == 0, "%s", err.message);
    char *j1 = tsup_json(&s1, &a1), *j2 = tsup_json(&s2, &a2);
    ck_assert_str_eq(j1, j2);
    ck_assert_msg(strstr(j2, mode ? "\"blob_id\"" : "\"blob2\""), "%.300s", j2);
    free(j1);
    free(j2);
    a1.release(&a1);
    s1.release(&s1);
    a2.release(&a2);
    s2.release(&s2);
  }
  lnc_dataset_close(ds);
  lnc_file_close(f);
}
END_TEST

/* Many copies of one long list<bool> row: 200 x 100,000 items are 2.5 MB of answer but 20
 * million items to put in order (13-16 bytes of working memory each), refused by the items
 * bound (lnc_take_max_items) in a file take and in a dataset take; 100 copies pass. */
START_TEST(test_take_max_items) {
  lnc_file *f = NULL;
  lnc_dataset *ds = NULL;
  struct lnc_error err = {0};
  open_both("deep21", &f, &ds);
  uint64_t ids[200];
  for (int i = 0; i < 200; i++) ids[i] = 7;
  const char *col[] = {"lbool"};
  struct lnc_take_options o = {.max_bytes = 64 << 20};
  struct ArrowSchema s;
  struct ArrowArray a;
  for (int ds_take = 0; ds_take < 2; ds_take++) {
    int rc = ds_take ? lnc_dataset_take_ex(ds, ids, 200, col, 1, &o, &s, &a, NULL, &err)
                     : lnc_take_ex(f, ids, 200, col, 1, &o, &s, &a, NULL, &err);
    ck_assert_msg(rc == LNC_ELIMIT && strstr(err.message, "list items") && strstr(err.message, LNC_TAKE_LIMIT_TEXT),
                  "%s take: %s", ds_take ? "dataset" : "file", err.message);
    rc = ds_take ? lnc_dataset_take_ex(ds, ids, 100, col, 1, &o, &s, &a, NULL, &err)
                 : lnc_take_ex(f, ids, 100, col, 1, &o, &s, &a, NULL, &err);
    ck_assert_msg(rc == 0, "%s", err.message);
    ck_assert_int_eq(a.length, 100);
    a.release(&a);
    s.release(&s);
  }
  /* What is not a list item does not count: 17,000 byte vectors of 1,024 (17.4 million items
   * copied as ranges, a 17 MB answer) and 2 million rows of nine scalar columns are served. */
  uint64_t *many = malloc(2000000 * sizeof *many);
  for (size_t i = 0; i < 2000000; i++) many[i] = i % 300;
  const char *vec[] = {"vu8"};
  for (int ds_take = 0; ds_take < 2; ds_take++) {
    int rc = ds_take ? lnc_dataset_take_ex(ds, many, 17000, vec, 1, &o, &s, &a, NULL, &err)
                     : lnc_take_ex(f, many, 17000, vec, 1, &o, &s, &a, NULL, &err);
    ck_assert_msg(rc == 0, "%s take of vectors: %s", ds_take ? "dataset" : "file", err.message);
    ck_assert_int_eq(a.length, 17000);
    a.release(&a);
    s.release(&s);
  }
  lnc_dataset_close(ds);
  lnc_file_close(f);
  char *path = tsup_fixture_file("types21");
  ck_assert_ptr_nonnull(path);
  ck_assert_msg(lnc_file_open(path, &f, &err) == 0, "%s", err.message);
  const char *nine[] = {"bool", "bool_n", "bool_z", "i8", "i8_n", "i8_z", "u8", "u8_n", "u8_z"};
  for (size_t i = 0; i < 2000000; i++) many[i] = 7;
  ck_assert_msg(lnc_take_ex(f, many, 2000000, nine, 9, &o, &s, &a, NULL, &err) == 0, "scalars: %s", err.message);
  a.release(&a);
  s.release(&s);
  lnc_file_close(f);
  free(path);
  free(many);
}
END_TEST

START_TEST(test_take_threads) {
  lnc_dataset *ds = open_ok("deletions_v21", 0);
  pthread_t th[4];
  struct thr_arg args[4];
  for (int i = 0; i < 4; i++) {
    args[i] = (struct thr_arg){ds, 0};
    pthread_create(&th[i], NULL, thr_take, &args[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    ck_assert(args[i].ok);
  }
  lnc_dataset_close(ds);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("dataset");
  TCase *tc = tcase_create("versions");
  tcase_add_test(tc, test_manifest_names);
  tcase_add_test(tc, test_versions_latest_and_pinned);
  tcase_add_test(tc, test_version_missing);
  tcase_add_test(tc, test_open_fd);
  tcase_add_test(tc, test_tags_vs_lance);
  tcase_add_test(tc, test_tag_files_parsed);
  suite_add_tcase(s, tc);
  tc = tcase_create("manifest");
  tcase_add_test(tc, test_manifests_parse);
  tcase_add_test(tc, test_addcol_second_file);
  tcase_add_test(tc, test_deletion_kinds);
  tcase_add_test(tc, test_roaring_containers);
  tcase_add_test(tc, test_roaring_runs_stay_runs);
  tcase_add_test(tc, test_live_to_physical);
  tcase_add_test(tc, test_arrow_deletion_reader_bounds);
  suite_add_tcase(s, tc);
  tc = tcase_create("rowmap");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_rowmap_vs_lance);
  tcase_add_test(tc, test_take_by_row_id);
  tcase_add_test(tc, test_clone_vs_lance);
  suite_add_tcase(s, tc);
  tc = tcase_create("damaged");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_torn_manifest);
  tcase_add_test(tc, test_missing_versions);
  tcase_add_test(tc, test_missing_data_file);
  tcase_add_test(tc, test_bad_deletion_files);
  tcase_add_test(tc, test_unknown_reader_flags);
  tcase_add_test(tc, test_clone_base_paths_checked);
  suite_add_tcase(s, tc);
  tc = tcase_create("take");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_take_vs_lance);
  tcase_add_test(tc, test_take_columns);
  tcase_add_test(tc, test_take_renamed);
  tcase_add_test(tc, test_take_threads);
  tcase_add_test(tc, test_take_max_bytes);
  tcase_add_test(tc, test_take_max_bytes_stops_early);
  tcase_add_test(tc, test_take_blob_descriptors);
  tcase_add_loop_test(tc, test_legacy_blob_nulls, 0, 2);
  tcase_add_test(tc, test_take_max_items);
  tcase_add_test(tc, test_take_spread);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return tsup_run(suite());
}
