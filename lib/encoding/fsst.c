/* FSST string decompression (Lance's page-wide symbol table, lance-format-compression.md §6).
 * The table is read in place, so setting up a decoder costs O(n_symbols) and needs no cache;
 * each string is sized in a first pass so the arena gets exactly what the output needs. */
#include "internal.h"

#define FSST_MAGIC 0x46535354u
#define FSST_ESC   255

int lnc_fsst_init(struct lnc_fsst *t, struct lnc_slice table, struct lnc_error *err) {
  if (table.len < 8)
    return lnc_errf(err, LNC_ECORRUPT, "FSST symbol table of %zu bytes", table.len);
  uint64_t h = lnc_rd64(table.p);
  if ((uint32_t)(h >> 32) != FSST_MAGIC)
    return lnc_errf(err, LNC_ECORRUPT, "FSST symbol table has no FSST magic");
  t->on = (h >> 24) & 1;
  t->n = (unsigned)(h & 255);
  if (table.len < 8 + 9 * (size_t)t->n)
    return lnc_errf(err, LNC_ECORRUPT, "FSST symbol table of %zu bytes cannot hold %u symbols",
                    table.len, t->n);
  t->sym = table.p + 8;
  t->lens = table.p + 8 + 8 * (size_t)t->n;
  for (unsigned i = 0; i < t->n; i++)
    if (t->lens[i] < 1 || t->lens[i] > 8)
      return lnc_errf(err, LNC_ECORRUPT, "FSST symbol %u has length %u", i, t->lens[i]);
  return 0;
}

int lnc_fsst_decoded_len(const struct lnc_fsst *t, struct lnc_slice codes, size_t *len,
                         struct lnc_error *err) {
  if (!t->on) {
    *len = codes.len;
    return 0;
  }
  size_t total = 0;
  for (size_t i = 0; i < codes.len; i++) {
    unsigned c = codes.p[i];
    if (c == FSST_ESC) {
      if (++i == codes.len) return lnc_errf(err, LNC_ECORRUPT, "FSST string ends in an escape");
      total += 1;
    } else if (c < t->n) { /* codes past the table decode to nothing, as in Lance */
      total += t->lens[c];
    }
  }
  *len = total;
  return 0;
}

size_t lnc_fsst_decode(const struct lnc_fsst *t, struct lnc_slice codes, uint8_t *dst) {
  if (!t->on) {
    if (codes.len) memcpy(dst, codes.p, codes.len);
    return codes.len;
  }
  const uint8_t *in = codes.p, *end = codes.p + codes.len;
  const uint8_t *sym = t->sym, *lens = t->lens;
  unsigned n = t->n;
  uint8_t *o = dst;
  while (in < end) {
    unsigned c = *in++;
    if (c == FSST_ESC) {
      if (in == end) break; /* rejected by lnc_fsst_decoded_len */
      *o++ = *in++;
    } else if (c < n) {
      memcpy(o, sym + 8 * (size_t)c, 8); /* dst has 8 bytes of slack */
      o += lens[c];
    }
  }
  return (size_t)(o - dst);
}

static int table_of(const Lance__Encodings21__Fsst *f, struct lnc_fsst *t, struct lnc_error *err) {
  struct lnc_slice st = {f->symbol_table.data, f->symbol_table.len};
  return lnc_fsst_init(t, st, err);
}

/* f's table for a block of codes, checked; *done (and *out set) when the codes are the
 * strings themselves (FSST off). */
static int fsst_start(const Lance__Encodings21__Fsst *f, const struct lnc_values *codes, struct lnc_fsst *t,
                      struct lnc_values *out, bool *done, struct lnc_error *err) {
  int rc = table_of(f, t, err);
  if (rc) return rc;
  if (codes->kind != LNC_VALUES_VARIABLE) return lnc_errf(err, LNC_ECORRUPT, "FSST values are not variable-width");
  if ((*done = !t->on)) *out = *codes;
  return 0;
}

int lnc_fsst_values(const Lance__Encodings21__Fsst *f, const struct lnc_values *codes,
                    struct lnc_arena *a, struct lnc_values *out, struct lnc_error *err) {
  struct lnc_fsst t;
  bool done;
  int rc = fsst_start(f, codes, &t, out, &done, err);
  if (rc || done) return rc;
  uint64_t n = codes->n;
  size_t total = 0;
  for (uint64_t i = 0; i < n; i++) {
    struct lnc_slice s = {codes->data + codes->offsets[i], codes->offsets[i + 1] - codes->offsets[i]};
    size_t l;
    if ((rc = lnc_fsst_decoded_len(&t, s, &l, err))) return rc;
    total += l; /* <= 8 * input bytes: no overflow */
  }
  if (total > LNC_ENC_MAX_DECOMPRESSED)
    return lnc_errf(err, LNC_ECORRUPT, "FSST chunk decodes to %zu bytes", total);
  uint64_t *offs = lnc_arena_alloc(a, (n + 1) * sizeof *offs);
  uint8_t *dst = lnc_arena_alloc(a, total + 8);
  if (!offs || !dst) return lnc_enc_nomem(err, "FSST output");
  size_t pos = 0;
  offs[0] = 0;
  for (uint64_t i = 0; i < n; i++) {
    struct lnc_slice s = {codes->data + codes->offsets[i], codes->offsets[i + 1] - codes->offsets[i]};
    pos += lnc_fsst_decode(&t, s, dst + pos);
    offs[i + 1] = pos;
  }
  lnc_values_variable(out, n, dst, pos, offs);
  return 0;
}

int lnc_fsst_pick(const Lance__Encodings21__Fsst *f, const struct lnc_values *codes, const uint32_t *want,
                  size_t nwant, struct lnc_arena *a, struct lnc_values *out, struct lnc_error *err) {
  for (size_t k = 1; k < nwant; k++)
    if (want[k] <= want[k - 1]) return lnc_fsst_values(f, codes, a, out, err);
  if (nwant && want[nwant - 1] >= codes->n) return lnc_errf(err, LNC_EINTERNAL, "FSST pick of value %u of %llu", want[nwant - 1], (unsigned long long)codes->n);
  struct lnc_fsst t;
  bool done;
  int rc = fsst_start(f, codes, &t, out, &done, err);
  if (rc || done) return rc;
  size_t total = 0;
  for (size_t k = 0; k < nwant; k++) {
    uint64_t i = want[k];
    struct lnc_slice s = {codes->data + codes->offsets[i], codes->offsets[i + 1] - codes->offsets[i]};
    size_t l;
    if ((rc = lnc_fsst_decoded_len(&t, s, &l, err))) return rc;
    total += l;
  }
  uint64_t n = codes->n;
  uint64_t *offs = lnc_arena_alloc(a, (n + 1) * sizeof *offs);
  uint8_t *dst = lnc_arena_alloc(a, total + 8);
  if (!offs || !dst) return lnc_enc_nomem(err, "FSST output");
  size_t pos = 0, k = 0;
  offs[0] = 0;
  for (uint64_t i = 0; i < n; i++) {
    if (k < nwant && want[k] == i) {
      struct lnc_slice s = {codes->data + codes->offsets[i], codes->offsets[i + 1] - codes->offsets[i]};
      pos += lnc_fsst_decode(&t, s, dst + pos);
      k++;
    }
    offs[i + 1] = pos;
  }
  lnc_values_variable(out, n, dst, pos, offs);
  return 0;
}

int lnc_fsst_value(const Lance__Encodings21__Fsst *f, struct lnc_slice codes,
                   struct lnc_arena *a, struct lnc_slice *out, struct lnc_error *err) {
  struct lnc_fsst t;
  int rc = table_of(f, &t, err);
  if (rc) return rc;
  if (!t.on) {
    *out = codes;
    return 0;
  }
  size_t l;
  if ((rc = lnc_fsst_decoded_len(&t, codes, &l, err))) return rc;
  uint8_t *dst = lnc_arena_alloc(a, l + 8);
  if (!dst) return lnc_enc_nomem(err, "FSST output");
  out->p = dst;
  out->len = lnc_fsst_decode(&t, codes, dst);
  return 0;
}
