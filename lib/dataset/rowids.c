/* Stable row ids (Lance's reader feature flag 2). Each fragment's manifest entry holds a
 * RowIdSequence (Lance's protos/rowids.proto; DataFragment field 5, inline bytes): the row id
 * of each of its physical rows, in row order, as segments — a range [start, end), a range
 * with holes (a sorted array of the values left out), a range with a bitmap (bit j, least
 * significant first within each byte, set when start + j is in it: what Lance's reader does,
 * whatever the proto's comment says), a sorted array, an unsorted array; arrays are base +
 * little-endian u16 / u32 offsets, or u64 values. Deleted rows keep their place in the
 * sequence (the deletion vector says they are gone).
 *
 * The index built from them, once per opened version: runs of live rows whose ids and
 * addresses both go up by one (rid, addr, len), sorted by id for row-id takes, and a copy
 * sorted by address for _rowid. An append-only table is one run per fragment; deletes and updates cut
 * runs. A damaged sequence does not make the version unreadable: offsets still work, row-id
 * takes and _rowid answer the corruption (ds->rowid_err). */
#include "dataset.h"
#include "../util/error.h"
#include "../util/buf.h"
#include "../util/mem.h"
#include "../util/pbwire.h"
#include <stdlib.h>
#include <string.h>

/* U64Segment's oneof (rowids.proto field numbers). */
enum seg_kind { SEG_RANGE = 1,
                SEG_HOLES = 2,
                SEG_BITMAP = 3,
                SEG_SORTED = 4,
                SEG_ARRAY = 5 };

struct u64arr { /* EncodedU64Array: value i = base + le(p + i * width) */
  unsigned width;
  uint64_t base;
  const uint8_t *p;
  uint64_t n;
};

struct seg {
  enum seg_kind kind;
  uint64_t start, end; /* ranges */
  struct u64arr arr;   /* holes, or the values of an array segment */
  const uint8_t *bits; /* bitmap */
  uint64_t nbits_bytes;
  uint64_t len; /* values in the segment */
};

static uint64_t arr_get(const struct u64arr *a, uint64_t i) {
  const uint8_t *q = a->p + i * a->width;
  return a->base + (a->width == 2 ? lnc_rd16(q) : a->width == 4 ? lnc_rd32(q)
                                                                : lnc_rd64(q));
}

/* EncodedU64Array: one of U16Array (1), U32Array (2): {1 base, 2 offsets bytes}, U64Array (3):
 * {2 values bytes}. */
static int parse_array(const uint8_t *p, size_t len, struct u64arr *out) {
  size_t pos = 0;
  struct lnc_pb_field f;
  int r, found = 0;
  while ((r = lnc_pb_next(p, len, &pos, &f)) == 1) {
    if (f.wire != LNC_PB_LEN || f.number < 1 || f.number > 3) continue;
    *out = (struct u64arr){.width = f.number == 1 ? 2 : f.number == 2 ? 4
                                                                      : 8};
    size_t q = 0;
    struct lnc_pb_field g;
    int s;
    while ((s = lnc_pb_next(f.data, f.len, &q, &g)) == 1) {
      if (g.number == 1 && g.wire == LNC_PB_VARINT && f.number != 3) out->base = g.varint;
      if (g.number == 2 && g.wire == LNC_PB_LEN) out->p = g.data, out->n = g.len;
    }
    if (s < 0 || out->n % out->width) return -1;
    out->n /= out->width;
    found = 1;
  }
  return r < 0 || !found ? -1 : 0;
}

/* One U64Segment into *sg, its length counted; -1 when damaged. */
static int parse_segment(const uint8_t *p, size_t len, struct seg *sg) {
  size_t pos = 0;
  struct lnc_pb_field f;
  int r, found = 0;
  while ((r = lnc_pb_next(p, len, &pos, &f)) == 1) {
    if (f.wire != LNC_PB_LEN || f.number < SEG_RANGE || f.number > SEG_ARRAY) continue;
    *sg = (struct seg){.kind = (enum seg_kind)f.number};
    found = 1;
    if (sg->kind == SEG_SORTED || sg->kind == SEG_ARRAY) {
      if (parse_array(f.data, f.len, &sg->arr)) return -1;
      sg->len = sg->arr.n;
      continue;
    }
    size_t q = 0;
    struct lnc_pb_field g;
    int s;
    bool have_holes = false;
    while ((s = lnc_pb_next(f.data, f.len, &q, &g)) == 1) {
      if (g.number == 1 && g.wire == LNC_PB_VARINT) sg->start = g.varint;
      if (g.number == 2 && g.wire == LNC_PB_VARINT) sg->end = g.varint;
      if (g.number == 3 && g.wire == LNC_PB_LEN && sg->kind == SEG_HOLES) {
        if (parse_array(g.data, g.len, &sg->arr)) return -1;
        have_holes = true;
      }
      if (g.number == 3 && g.wire == LNC_PB_LEN && sg->kind == SEG_BITMAP) sg->bits = g.data, sg->nbits_bytes = g.len;
    }
    if (s < 0 || sg->end < sg->start) return -1;
    uint64_t span = sg->end - sg->start;
    if (sg->kind == SEG_RANGE) {
      sg->len = span;
    } else if (sg->kind == SEG_HOLES) {
      if (!have_holes || sg->arr.n > span) return -1;
      sg->len = span - sg->arr.n; /* the holes are checked in range and increasing as walked */
    } else {
      if (sg->nbits_bytes < span / 8 + (span % 8 != 0)) return -1;
      sg->len = 0;
      for (uint64_t j = 0; j < span; j++) sg->len += (sg->bits[j / 8] >> (j % 8)) & 1;
    }
  }
  return r < 0 || !found ? -1 : 0;
}

struct builder {
  uint64_t *collect; /* lnc_ds_rowids_decode: the values by position, no runs */
  uint64_t rows;     /* the fragment's physical rows: no position at or past it */
  uint64_t fid;
  const struct lnc_ds_deletions *del;
  size_t delrun; /* the deleted run at or after the current position */
  struct lnc_ds_idrun *runs;
  size_t nruns, cap;
};

static bool deleted(struct builder *b, uint64_t pos) {
  const struct lnc_ds_deletions *d = b->del;
  while (b->delrun < d->nruns && (uint64_t)d->runs[b->delrun].start + d->runs[b->delrun].len <= pos) b->delrun++;
  return b->delrun < d->nruns && d->runs[b->delrun].start <= pos;
}

/* Row id v at physical row pos of the fragment: extends the last run or starts one. */
static int add(struct builder *b, uint64_t pos, uint64_t v) {
  if (pos >= b->rows) return LNC_ECORRUPT; /* holes out of their range: more values than counted */
  if (b->collect) {
    b->collect[pos] = v;
    return 0;
  }
  if (deleted(b, pos)) return 0;
  uint64_t addr = b->fid << 32 | pos;
  struct lnc_ds_idrun *last = b->nruns ? &b->runs[b->nruns - 1] : NULL;
  if (last && last->len < UINT32_MAX && last->rid + last->len == v && last->addr + last->len == addr) {
    last->len++;
    return 0;
  }
  if (lnc_grow_array((void **)&b->runs, &b->cap, b->nruns + 1, sizeof *b->runs)) return LNC_ENOMEM;
  b->runs[b->nruns++] = (struct lnc_ds_idrun){v, addr, 1};
  return 0;
}

/* The values of sg for physical rows *pos.. (the segment's values in order). A loop per
 * value on purpose: this runs once per opened version, bounded by the fragment's rows. */
static int walk_segment(struct builder *b, const struct seg *sg, uint64_t *pos, struct lnc_error *err) {
  int rc = 0;
  switch (sg->kind) {
  case SEG_RANGE:
    for (uint64_t v = sg->start; v < sg->end && !rc; v++) rc = add(b, (*pos)++, v);
    break;
  case SEG_HOLES: {
    uint64_t h = 0, prev = 0;
    for (uint64_t v = sg->start; v < sg->end && !rc; v++) {
      if (h < sg->arr.n) {
        uint64_t hv = arr_get(&sg->arr, h);
        if (hv < v || (h && hv <= prev)) /* below the range, out of order, repeated */
          return lnc_errf(err, LNC_ECORRUPT, "hole %llu of a row id range is out of order or range",
                          (unsigned long long)hv);
        if (hv == v) {
          prev = hv, h++;
          continue;
        }
      }
      rc = add(b, (*pos)++, v);
    }
    if (!rc && h < sg->arr.n)
      return lnc_errf(err, LNC_ECORRUPT, "a row id range has holes past its end");
    break;
  }
  case SEG_BITMAP:
    for (uint64_t j = 0; j < sg->end - sg->start && !rc; j++)
      if ((sg->bits[j / 8] >> (j % 8)) & 1) rc = add(b, (*pos)++, sg->start + j);
    break;
  case SEG_SORTED:
  case SEG_ARRAY:
    for (uint64_t i = 0; i < sg->arr.n && !rc; i++) rc = add(b, (*pos)++, arr_get(&sg->arr, i));
    break;
  }
  if (rc == LNC_ECORRUPT) return lnc_errf(err, LNC_ECORRUPT, "the row id sequence holds more ids than rows");
  return rc == LNC_ENOMEM ? lnc_errf(err, LNC_ENOMEM, "out of memory") : rc;
}

/* Fragment i's sequence (len bytes) into b's runs; its values must number its physical rows. */
static int walk_fragment(struct builder *b, const uint8_t *p, size_t len, uint64_t rows, struct lnc_error *err) {
  /* Lengths first: every segment parsed and counted before any is walked, so a damaged
   * count (a range of 2^60 values) is refused, not iterated. */
  uint64_t total = 0;
  size_t pos = 0;
  struct lnc_pb_field f;
  int r;
  while ((r = lnc_pb_next(p, len, &pos, &f)) == 1) {
    if (f.number != 1 || f.wire != LNC_PB_LEN) continue;
    struct seg sg;
    if (parse_segment(f.data, f.len, &sg)) return lnc_errf(err, LNC_ECORRUPT, "a row id segment does not parse");
    if (sg.len > rows || total + sg.len > rows) break;
    total += sg.len;
  }
  if (r < 0) return lnc_errf(err, LNC_ECORRUPT, "the row id sequence does not parse");
  if (r == 1 || total != rows)
    return lnc_errf(err, LNC_ECORRUPT, "the row id sequence does not hold one id per row (%llu rows)",
                    (unsigned long long)rows);
  uint64_t at = 0;
  pos = 0;
  b->rows = rows;
  while (lnc_pb_next(p, len, &pos, &f) == 1) {
    if (f.number != 1 || f.wire != LNC_PB_LEN) continue;
    struct seg sg;
    parse_segment(f.data, f.len, &sg);
    int rc = walk_segment(b, &sg, &at, err);
    if (rc) return rc;
  }
  return 0;
}

int lnc_ds_rowids_decode(const uint8_t *p, size_t len, uint64_t rows, uint64_t *values, struct lnc_error *err) {
  struct builder b = {.collect = values};
  return walk_fragment(&b, p, len, rows, err);
}

static int cmp_rid(const void *a, const void *b) {
  const struct lnc_ds_idrun *x = a, *y = b;
  return x->rid < y->rid ? -1 : x->rid > y->rid;
}

static int cmp_addr(const void *a, const void *b) {
  const struct lnc_ds_idrun *x = a, *y = b;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Runs sorted by id; no id live twice. */
static int finish(lnc_dataset *ds, struct builder *b, struct lnc_error *err) {
  qsort(b->runs, b->nruns, sizeof *b->runs, cmp_rid);
  for (size_t i = 1; i < b->nruns; i++)
    if (b->runs[i - 1].rid + b->runs[i - 1].len > b->runs[i].rid)
      return lnc_errf(err, LNC_ECORRUPT, "row id %llu is live in two places", (unsigned long long)b->runs[i].rid);
  struct lnc_ds_idrun *by_addr = malloc((b->nruns ? b->nruns : 1) * sizeof *by_addr);
  if (!by_addr) return lnc_errf(err, LNC_ENOMEM, "out of memory");
  if (b->nruns) memcpy(by_addr, b->runs, b->nruns * sizeof *by_addr);
  qsort(by_addr, b->nruns, sizeof *by_addr, cmp_addr);
  ds->idruns = b->runs, ds->nidruns = b->nruns, ds->idruns_addr = by_addr;
  b->runs = NULL;
  return 0;
}

int lnc_ds_rowids_build(lnc_dataset *ds) {
  if (!(ds->m->reader_feature_flags & LNC_DS_FLAG_STABLE_ROW_IDS)) return 0;
  struct builder b = {0};
  struct lnc_error *err = &ds->rowid_err;
  int rc = 0;
  for (size_t i = 0; i < ds->nfrag && !rc; i++) {
    const Lance__Table__DataFragment *fr = ds->frags[i].pb;
    b.fid = fr->id, b.del = &ds->frags[i].del, b.delrun = 0;
    if (!fr->inline_row_ids.len && fr->physical_rows) {
      /* DataFragment field 6 (external_row_ids) is not in our table.proto: protobuf-c keeps
       * it among the unknown fields. */
      bool external = false;
      for (size_t u = 0; u < fr->base.n_unknown_fields; u++) external |= fr->base.unknown_fields[u].tag == 6;
      rc = external ? lnc_errf(err, LNC_EUNSUPPORTED, "fragment %llu keeps its row ids in an external file, "
                                                      "which lanced does not read yet (Lance's writer keeps them inline)",
                               (unsigned long long)fr->id)
                    : lnc_errf(err, LNC_ECORRUPT, "fragment %llu has no row id sequence", (unsigned long long)fr->id);
      break;
    }
    if ((rc = walk_fragment(&b, fr->inline_row_ids.data, fr->inline_row_ids.len, fr->physical_rows, err)))
      lnc_err_prefix(err, "fragment %llu", (unsigned long long)fr->id);
  }
  if (!rc) rc = finish(ds, &b, err);
  if (rc) lnc_err_prefix(err, "stable row ids");
  free(b.runs);
  return rc == LNC_ENOMEM ? rc : 0; /* a damaged sequence is the row-id takes' error, kept */
}

/* The run of runs[0..n) (sorted by id, or by address: by_addr) holding key, or NULL. */
static const struct lnc_ds_idrun *run_holding(const struct lnc_ds_idrun *runs, size_t n, uint64_t key,
                                              bool by_addr) {
  size_t lo = 0, hi = n; /* the first run starting above key */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if ((by_addr ? runs[mid].addr : runs[mid].rid) <= key)
      lo = mid + 1;
    else
      hi = mid;
  }
  const struct lnc_ds_idrun *r = lo ? &runs[lo - 1] : NULL;
  return r && key - (by_addr ? r->addr : r->rid) < r->len ? r : NULL;
}

static int index_ready(const lnc_dataset *ds, struct lnc_error *err) {
  if (!ds->rowid_err.code) return 0;
  return lnc_errf(err, ds->rowid_err.code, "%s", ds->rowid_err.message);
}

int lnc_ds_rowid_lookup(const lnc_dataset *ds, uint64_t rid, uint64_t *addr, struct lnc_error *err) {
  int rc = index_ready(ds, err);
  if (rc) return rc;
  const struct lnc_ds_idrun *r = run_holding(ds->idruns, ds->nidruns, rid, false);
  if (!r)
    return lnc_errf(err, LNC_ENOTFOUND, "row id %llu names no live row of version %llu (deleted, or never written)",
                    (unsigned long long)rid, (unsigned long long)ds->version.version);
  *addr = r->addr + (rid - r->rid);
  return 0;
}

int lnc_ds_rowid_of(const lnc_dataset *ds, uint64_t addr, uint64_t *rid, struct lnc_error *err) {
  int rc = index_ready(ds, err);
  if (rc) return rc;
  const struct lnc_ds_idrun *r = run_holding(ds->idruns_addr, ds->nidruns, addr, true);
  if (!r)
    return lnc_errf(err, LNC_EINTERNAL, "%s: live row %llx has no row id", ds->name, (unsigned long long)addr);
  *rid = r->rid + (addr - r->addr);
  return 0;
}

size_t lnc_ds_rowids_memory(const lnc_dataset *ds) {
  return 2 * ds->nidruns * sizeof *ds->idruns;
}
