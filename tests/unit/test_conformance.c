/* Conformance: every case of every fixture in tests/fixtures/index.json (Lance's own answers,
 * see tests/fixtures/README.md) through lnc_take + lnc_encode_json, compared byte for byte.
 *
 * Each case runs three times on one open file handle: as written, again (warm caches), and
 * with the ids reversed (expected rows reversed). Columns listed in a fixture's
 * `lance_differs` (blob columns: Lance answers with descriptors) or `excluded` are left out of
 * the projection and their keys are cut out of the expected rows; that is done on the raw
 * text with a small scanner (below), never by re-encoding numbers, so the bytes stay Lance's.
 *
 * Env: LNC_LARGE_FIXTURES=<dir> also runs <dir>/index.json (node tests/fixtures/gen.mjs
 * --large <dir>); LNC_CONFORMANCE_ONLY=name[,name] runs only those fixtures. Prints one line
 * per fixture and fails if any case fails. Run from the repository root. */
#include "lance.h"
#include <check.h>
#include "support/support.h"
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a growable string ---------------------------------------------------------------- */
struct sb {
  char *p;
  size_t n, cap;
};
static void sb_add(struct sb *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t c = b->cap ? b->cap : 256;
    while (c < b->n + n + 1) c *= 2;
    b->p = realloc(b->p, c);
    ck_assert_ptr_nonnull(b->p);
    b->cap = c;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = 0;
}
static void sb_str(struct sb *b, const char *s) { sb_add(b, s, strlen(s)); }

/* ---- a tolerant scanner for the JSON rows body ------------------------------------------
 * Finds the raw text of num_rows, of each `columns` entry and of each key and value of each
 * row object. Values are not interpreted, only delimited. */
struct span {
  const char *p;
  size_t n;
};
struct kv {
  struct span k, v; /* k includes its quotes */
};
struct row {
  struct kv *kv;
  size_t n, cap;
};
struct body {
  struct span num_rows;
  struct span *cols;
  size_t ncols, capcols;
  struct row *rows;
  size_t nrows, caprows;
};

static const char *skip_ws(const char *p, const char *e) {
  while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  return p;
}

static const char *scan_string(const char *p, const char *e) {
  if (p >= e || *p != '"') return NULL;
  for (p++; p < e; p++) {
    if (*p == '\\') {
      p++;
      continue;
    }
    if (*p == '"') return p + 1;
  }
  return NULL;
}

/* Returns the end of the value starting at p (after leading blanks were skipped). */
static const char *scan_value(const char *p, const char *e) {
  if (p >= e) return NULL;
  if (*p == '"') return scan_string(p, e);
  if (*p == '{' || *p == '[') {
    int depth = 0;
    while (p < e) {
      if (*p == '"') {
        p = scan_string(p, e);
        if (!p) return NULL;
        continue;
      }
      if (*p == '{' || *p == '[')
        depth++;
      else if (*p == '}' || *p == ']') {
        if (--depth == 0) return p + 1;
      }
      p++;
    }
    return NULL;
  }
  const char *s = p;
  while (p < e && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n' && *p != '\t' &&
         *p != '\r')
    p++;
  return p > s ? p : NULL;
}

static void body_free(struct body *b) {
  for (size_t i = 0; i < b->nrows; i++) free(b->rows[i].kv);
  free(b->rows);
  free(b->cols);
  memset(b, 0, sizeof *b);
}

static bool key_is(struct span k, const char *name) {
  size_t n = strlen(name);
  return k.n == n + 2 && memcmp(k.p + 1, name, n) == 0;
}

static const char *scan_row(const char *p, const char *e, struct row *r) {
  if (p >= e || *p != '{') return NULL;
  p = skip_ws(p + 1, e);
  if (p < e && *p == '}') return p + 1;
  for (;;) {
    struct kv kv;
    const char *q = scan_string(p, e);
    if (!q) return NULL;
    kv.k = (struct span){p, (size_t)(q - p)};
    p = skip_ws(q, e);
    if (p >= e || *p != ':') return NULL;
    p = skip_ws(p + 1, e);
    q = scan_value(p, e);
    if (!q) return NULL;
    kv.v = (struct span){p, (size_t)(q - p)};
    if (r->n == r->cap) {
      r->cap = r->cap ? r->cap * 2 : 16;
      r->kv = realloc(r->kv, r->cap * sizeof *r->kv);
      if (!r->kv) return NULL;
    }
    r->kv[r->n++] = kv;
    p = skip_ws(q, e);
    if (p < e && *p == ',') {
      p = skip_ws(p + 1, e);
      continue;
    }
    if (p < e && *p == '}') return p + 1;
    return NULL;
  }
}

/* Returns 0 when text looks like {"num_rows":K,"columns":[...],"rows":[{...},...]}. */
static int body_scan(const char *text, size_t len, struct body *b) {
  memset(b, 0, sizeof *b);
  const char *p = skip_ws(text, text + len), *e = text + len;
  if (p >= e || *p != '{') return -1;
  p = skip_ws(p + 1, e);
  while (p < e && *p != '}') {
    const char *q = scan_string(p, e);
    if (!q) return -1;
    struct span k = {p, (size_t)(q - p)};
    p = skip_ws(q, e);
    if (p >= e || *p != ':') return -1;
    p = skip_ws(p + 1, e);
    if (key_is(k, "columns") || key_is(k, "rows")) {
      bool rows = key_is(k, "rows");
      if (p >= e || *p != '[') return -1;
      p = skip_ws(p + 1, e);
      while (p < e && *p != ']') {
        if (rows) {
          if (b->nrows == b->caprows) {
            b->caprows = b->caprows ? b->caprows * 2 : 64;
            b->rows = realloc(b->rows, b->caprows * sizeof *b->rows);
            if (!b->rows) return -1;
          }
          struct row *r = &b->rows[b->nrows++];
          memset(r, 0, sizeof *r);
          q = scan_row(p, e, r);
        } else {
          q = scan_string(p, e);
          if (q) {
            if (b->ncols == b->capcols) {
              b->capcols = b->capcols ? b->capcols * 2 : 32;
              b->cols = realloc(b->cols, b->capcols * sizeof *b->cols);
              if (!b->cols) return -1;
            }
            b->cols[b->ncols++] = (struct span){p, (size_t)(q - p)};
          }
        }
        if (!q) return -1;
        p = skip_ws(q, e);
        if (p < e && *p == ',')
          p = skip_ws(p + 1, e);
        else if (p >= e || *p != ']')
          return -1;
      }
      if (p >= e) return -1;
      p++;
    } else {
      q = scan_value(p, e);
      if (!q) return -1;
      if (key_is(k, "num_rows")) b->num_rows = (struct span){p, (size_t)(q - p)};
      p = q;
    }
    p = skip_ws(p, e);
    if (p < e && *p == ',') p = skip_ws(p + 1, e);
  }
  return (p < e && b->num_rows.p) ? 0 : -1;
}

static bool skipped(struct span k, const char *const *skip, size_t nskip) {
  for (size_t i = 0; i < nskip; i++)
    if (key_is(k, skip[i])) return true;
  return false;
}

/* Writes the body back from its raw pieces, without the keys in skip, rows optionally
 * reversed. With nothing skipped and no reversal this reproduces the input exactly. */
static void body_emit(const struct body *b, const char *const *skip, size_t nskip, bool reversed,
                      struct sb *out) {
  out->n = 0;
  sb_str(out, "{\"num_rows\":");
  sb_add(out, b->num_rows.p, b->num_rows.n);
  sb_str(out, ",\"columns\":[");
  bool first = true;
  for (size_t i = 0; i < b->ncols; i++) {
    if (skipped(b->cols[i], skip, nskip)) continue;
    if (!first) sb_str(out, ",");
    first = false;
    sb_add(out, b->cols[i].p, b->cols[i].n);
  }
  sb_str(out, "],\"rows\":[");
  for (size_t j = 0; j < b->nrows; j++) {
    const struct row *r = &b->rows[reversed ? b->nrows - 1 - j : j];
    sb_str(out, j ? ",{" : "{");
    first = true;
    for (size_t i = 0; i < r->n; i++) {
      if (skipped(r->kv[i].k, skip, nskip)) continue;
      if (!first) sb_str(out, ",");
      first = false;
      sb_add(out, r->kv[i].k.p, r->kv[i].k.n);
      sb_str(out, ":");
      sb_add(out, r->kv[i].v.p, r->kv[i].v.n);
    }
    sb_str(out, "}");
  }
  sb_str(out, "]}");
}

/* ---- reporting a difference ------------------------------------------------------------ */
/* Describes where got differs from want: num_rows, columns, or first row/column. */
static void describe_diff(const char *want, size_t wn, const char *got, size_t gn,
                          const uint64_t *ids, size_t nids, char *msg, size_t cap) {
  struct body w, g;
  char e1[160], e2[160];
  if (body_scan(want, wn, &w) || body_scan(got, gn, &g)) {
    size_t n = (size_t)snprintf(msg, cap, "body ");
    tsup_body_eq(want, wn, got, gn, msg + n, cap - n);
    body_free(&w);
    body_free(&g);
    return;
  }
  if (w.num_rows.n != g.num_rows.n || memcmp(w.num_rows.p, g.num_rows.p, w.num_rows.n)) {
    snprintf(msg, cap, "num_rows: want %.*s got %.*s", (int)w.num_rows.n, w.num_rows.p,
             (int)g.num_rows.n, g.num_rows.p);
    goto done;
  }
  for (size_t i = 0; i < w.ncols || i < g.ncols; i++) {
    if (i >= w.ncols || i >= g.ncols || w.cols[i].n != g.cols[i].n ||
        memcmp(w.cols[i].p, g.cols[i].p, w.cols[i].n)) {
      snprintf(msg, cap, "columns[%zu]: want %.*s got %.*s", i, i < w.ncols ? (int)w.cols[i].n : 6,
               i < w.ncols ? w.cols[i].p : "(none)", i < g.ncols ? (int)g.cols[i].n : 6,
               i < g.ncols ? g.cols[i].p : "(none)");
      goto done;
    }
  }
  for (size_t r = 0; r < w.nrows && r < g.nrows; r++) {
    const struct row *wr = &w.rows[r], *gr = &g.rows[r];
    for (size_t i = 0; i < wr->n || i < gr->n; i++) {
      if (i >= wr->n || i >= gr->n) {
        snprintf(msg, cap, "row %zu (id %llu): %zu keys wanted, %zu produced", r,
                 r < nids ? (unsigned long long)ids[r] : 0ull, wr->n, gr->n);
        goto done;
      }
      const struct kv *a = &wr->kv[i], *b = &gr->kv[i];
      if (a->k.n != b->k.n || memcmp(a->k.p, b->k.p, a->k.n)) {
        snprintf(msg, cap, "row %zu (id %llu) key %zu: want %.*s got %.*s", r,
                 r < nids ? (unsigned long long)ids[r] : 0ull, i, (int)a->k.n, a->k.p,
                 (int)b->k.n, b->k.p);
        goto done;
      }
      if (a->v.n != b->v.n || memcmp(a->v.p, b->v.p, a->v.n)) {
        size_t d = tsup_first_diff(a->v.p, a->v.n, b->v.p, b->v.n);
        tsup_excerpt(e1, sizeof e1, a->v.p, a->v.n, d);
        tsup_excerpt(e2, sizeof e2, b->v.p, b->v.n, d);
        snprintf(msg, cap, "row %zu (id %llu) column %.*s: want %s | got %s", r,
                 r < nids ? (unsigned long long)ids[r] : 0ull, (int)a->k.n, a->k.p, e1, e2);
        goto done;
      }
    }
  }
  if (w.nrows != g.nrows)
    snprintf(msg, cap, "%zu rows wanted, %zu produced", w.nrows, g.nrows);
  else {
    size_t n = (size_t)snprintf(msg, cap, "body (outside rows) ");
    tsup_body_eq(want, wn, got, gn, msg + n, cap - n);
  }
done:
  body_free(&w);
  body_free(&g);
}

/* ---- fixtures ---------------------------------------------------------------------------- */
static json_t *g_index;       /* tests/fixtures/index.json */
static json_t *g_large_index; /* $LNC_LARGE_FIXTURES/index.json, or NULL */

static bool name_in(json_t *arr, const char *name, const char *key) {
  size_t i;
  json_t *v;
  json_array_foreach(arr, i, v) {
    json_t *s = key ? json_object_get(v, key) : v;
    if (json_is_string(s) && strcmp(json_string_value(s), name) == 0) return true;
  }
  return false;
}

static bool fixture_selected(const char *name) {
  const char *only = getenv("LNC_CONFORMANCE_ONLY");
  if (!only || !*only) return true;
  size_t n = strlen(name);
  for (const char *p = only; *p;) {
    const char *c = strchr(p, ',');
    size_t len = c ? (size_t)(c - p) : strlen(p);
    if (len == n && memcmp(p, name, n) == 0) return true;
    p += len + (c ? 1 : 0);
  }
  return false;
}

struct fixture_run {
  const char *name;
  lnc_file *f;
  const char **skip; /* lance_differs + excluded column names */
  size_t nskip;
  const char **all_cols; /* every indexed column except the skipped ones */
  size_t nall;
  int reported; /* failure lines printed so far */
};

enum { MAX_REPORTS = 12 };

static void report(struct fixture_run *fx, size_t line, const char *pass, const uint64_t *ids,
                   size_t n, const char *what) {
  if (fx->reported++ >= MAX_REPORTS) {
    if (fx->reported == MAX_REPORTS + 1) printf("  %s: (more failures not shown)\n", fx->name);
    return;
  }
  char idtxt[96];
  size_t o = 0;
  idtxt[0] = 0;
  for (size_t i = 0; i < n && o + 24 < sizeof idtxt; i++)
    o += (size_t)snprintf(idtxt + o, sizeof idtxt - o, "%s%llu", i ? "," : "",
                          (unsigned long long)ids[i]);
  if (o + 24 >= sizeof idtxt) snprintf(idtxt + o, sizeof idtxt - o, ",...(%zu ids)", n);
  printf("  FAIL %s line %zu (%s) ids [%s]: %s\n", fx->name, line, pass, idtxt, what);
}

/* One take + encode; compares with want. Returns true on a match. */
static bool run_pass(struct fixture_run *fx, size_t line, const char *pass, const uint64_t *ids,
                     size_t n, const char *const *cols, size_t ncols, const char *want,
                     size_t wn) {
  struct ArrowSchema schema;
  struct ArrowArray array;
  struct lnc_error err = {0};
  char msg[600];
  int rc = lnc_take(fx->f, ids, n, cols, ncols, &schema, &array, NULL, &err);
  if (rc) {
    snprintf(msg, sizeof msg, "lnc_take failed: %s: %s", lnc_code_name(rc), err.message);
    report(fx, line, pass, ids, n, msg);
    return false;
  }
  struct lnc_buf out = {0};
  rc = lnc_encode_json(&schema, &array, &out, &err);
  array.release(&array);
  schema.release(&schema);
  if (rc) {
    snprintf(msg, sizeof msg, "lnc_encode_json failed: %s: %s", lnc_code_name(rc), err.message);
    report(fx, line, pass, ids, n, msg);
    lnc_buf_free(&out);
    return false;
  }
  bool ok = out.len == wn && memcmp(out.data, want, wn) == 0;
  if (!ok) {
    describe_diff(want, wn, (const char *)out.data, out.len, ids, n, msg, sizeof msg);
    report(fx, line, pass, ids, n, msg);
  }
  lnc_buf_free(&out);
  return ok;
}

/* Parses one answers line and runs its three passes. Returns true when all pass. */
static bool run_case(struct fixture_run *fx, size_t lineno, char *line, size_t len) {
  char msg[600];
  if (len && line[len - 1] == '\n') line[--len] = 0;
  char *fld[3]; /* ids, columns, rows body */
  if (!tsup_split_tabs(line, fld, 3)) {
    report(fx, lineno, "parse", NULL, 0, "answers line has fewer than three TAB-separated fields");
    return false;
  }
  const char *want = fld[2];
  size_t wn = len - (size_t)(want - line);
  json_error_t jerr;
  json_t *jids = json_loads(fld[0], 0, &jerr), *jcols = json_loads(fld[1], JSON_DECODE_ANY, &jerr);
  bool ok = true;
  uint64_t *ids = NULL, *rids = NULL;
  const char **cols = NULL;
  size_t n = 0, ncols = 0;
  struct body exp = {0};
  struct sb want2 = {0};
  if (!json_is_array(jids) || !(json_is_array(jcols) || json_is_null(jcols))) {
    report(fx, lineno, "parse", NULL, 0, "ids/columns field does not parse");
    ok = false;
    goto out;
  }
  n = json_array_size(jids);
  ids = malloc((n ? n : 1) * sizeof *ids);
  rids = malloc((n ? n : 1) * sizeof *rids);
  ck_assert(ids && rids);
  for (size_t i = 0; i < n; i++) {
    json_t *v = json_array_get(jids, i);
    ck_assert_msg(json_is_integer(v) && json_integer_value(v) >= 0, "%s line %zu: bad id", fx->name,
                  lineno);
    ids[i] = (uint64_t)json_integer_value(v);
    rids[n - 1 - i] = ids[i];
  }
  /* Projection: the case's columns minus skipped ones; null = all, or all but the skipped. */
  bool cut = false;
  if (json_is_array(jcols)) {
    cols = calloc(json_array_size(jcols) + 1, sizeof *cols);
    ck_assert_ptr_nonnull(cols);
    size_t i;
    json_t *v;
    json_array_foreach(jcols, i, v) {
      const char *c = json_string_value(v);
      bool drop = false;
      for (size_t k = 0; k < fx->nskip; k++) drop |= strcmp(fx->skip[k], c) == 0;
      if (drop)
        cut = true;
      else
        cols[ncols++] = c;
    }
    if (ncols == 0) { /* every requested column is one Lance answers differently */
      ok = true;
      goto out;
    }
  } else if (fx->nskip) {
    cols = fx->all_cols;
    ncols = fx->nall;
    cut = true;
  }
  if (body_scan(want, wn, &exp)) {
    report(fx, lineno, "parse", ids, n, "expected body does not scan");
    ok = false;
    goto out;
  }
  body_emit(&exp, NULL, 0, false, &want2);
  if (want2.n != wn || memcmp(want2.p, want, wn)) {
    describe_diff(want, wn, want2.p, want2.n, ids, n, msg, sizeof msg);
    report(fx, lineno, "scanner self-check", ids, n, msg);
    ok = false;
    goto out;
  }
  const char *w = want;
  size_t wlen = wn;
  if (cut) {
    body_emit(&exp, fx->skip, fx->nskip, false, &want2);
    w = want2.p;
    wlen = want2.n;
  }
  const char *const *cc = (const char *const *)cols;
  ok &= run_pass(fx, lineno, "cold", ids, n, cc, ncols, w, wlen);
  ok &= run_pass(fx, lineno, "warm", ids, n, cc, ncols, w, wlen);
  body_emit(&exp, fx->skip, fx->nskip, true, &want2);
  ok &= run_pass(fx, lineno, "reversed", rids, n, cc, ncols, want2.p, want2.n);
out:
  if (cols != fx->all_cols) free(cols);
  free(ids);
  free(rids);
  free(want2.p);
  body_free(&exp);
  json_decref(jids);
  json_decref(jcols);
  return ok;
}

/* Runs every case of one fixture; prints one summary line. Returns the number of failed cases
 * (a fixture whose file does not open fails all its cases). */
static size_t run_fixture(json_t *fxj) {
  const char *name = json_string_value(json_object_get(fxj, "name"));
  const char *file = json_string_value(json_object_get(fxj, "file"));
  const char *answers = json_string_value(json_object_get(fxj, "answers"));
  ck_assert_msg(name && file && answers, "index.json entry without name/file/answers");
  struct fixture_run fx = {.name = name};
  json_t *differs = json_object_get(fxj, "lance_differs"), *excluded = json_object_get(fxj, "excluded");
  json_t *columns = json_object_get(fxj, "columns");
  fx.skip = calloc(json_array_size(differs) + json_array_size(excluded) + 1, sizeof *fx.skip);
  fx.all_cols = calloc(json_array_size(columns) + 1, sizeof *fx.all_cols);
  ck_assert(fx.skip && fx.all_cols);
  size_t i;
  json_t *v;
  json_array_foreach(differs, i, v) if (json_is_string(v)) fx.skip[fx.nskip++] = json_string_value(v);
  json_array_foreach(excluded, i, v) {
    json_t *c = json_object_get(v, "column");
    if (json_is_string(c)) fx.skip[fx.nskip++] = json_string_value(c);
  }
  json_array_foreach(columns, i, v) {
    const char *c = json_string_value(json_object_get(v, "name"));
    if (c && !name_in(differs, c, NULL) && !name_in(excluded, c, "column")) fx.all_cols[fx.nall++] = c;
  }

  FILE *af = fopen(answers, "r");
  ck_assert_msg(af != NULL, "%s: cannot open answers %s", name, answers);
  struct lnc_error err = {0};
  int orc = lnc_file_open(file, &fx.f, &err);
  size_t passed = 0, failed = 0, lineno = 0;
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  while ((len = getline(&line, &cap, af)) > 0) {
    lineno++;
    if (orc) {
      failed++;
      continue;
    }
    if (run_case(&fx, lineno, line, (size_t)len))
      passed++;
    else
      failed++;
  }
  free(line);
  fclose(af);
  if (orc)
    printf("  FAIL %s: lnc_file_open(%s): %s: %s\n", name, file, lnc_code_name(orc), err.message);
  if (fx.f) lnc_file_close(fx.f);
  printf("conformance %-12s %zu/%zu cases passed (cold, warm, reversed)%s\n", name, passed,
         passed + failed, failed ? "  <-- FAILED" : "");
  fflush(stdout);
  free(fx.skip);
  free(fx.all_cols);
  return failed;
}

static void run_index_entry(json_t *index, int i) {
  json_t *fxj = json_array_get(json_object_get(index, "fixtures"), (size_t)i);
  ck_assert_ptr_nonnull(fxj);
  const char *name = json_string_value(json_object_get(fxj, "name"));
  if (!fixture_selected(name ? name : "")) return;
  size_t failed = run_fixture(fxj);
  ck_assert_msg(failed == 0, "fixture %s: %zu case(s) failed (details above)", name, failed);
}

START_TEST(test_fixture) { run_index_entry(g_index, _i); }
END_TEST

START_TEST(test_large_fixture) { run_index_entry(g_large_index, _i); }
END_TEST

/* The scanner itself: cut keys, reverse rows, keep bytes (numbers are never re-encoded). */
START_TEST(test_scanner) {
  const char *in = "{\"num_rows\":2,\"columns\":[\"a\",\"b\",\"c\"],\"rows\":[{\"a\":1.50e+3,\"b\":"
                   "{\"x\":\"}]\\\"\",\"y\":[1,[2]]},\"c\":null},{\"a\":-0,\"b\":null,\"c\":\"\\\\\"}]}";
  struct body b;
  ck_assert_int_eq(body_scan(in, strlen(in), &b), 0);
  ck_assert_uint_eq(b.nrows, 2);
  struct sb o = {0};
  body_emit(&b, NULL, 0, false, &o);
  ck_assert_str_eq(o.p, in);
  const char *skip[] = {"b"};
  body_emit(&b, skip, 1, true, &o);
  ck_assert_str_eq(o.p, "{\"num_rows\":2,\"columns\":[\"a\",\"c\"],\"rows\":[{\"a\":-0,\"c\":\"\\\\\"},"
                        "{\"a\":1.50e+3,\"c\":null}]}");
  char msg[600];
  const char *got = "{\"num_rows\":2,\"columns\":[\"a\",\"c\"],\"rows\":[{\"a\":-0,\"c\":\"\\\\\"},"
                    "{\"a\":1500,\"c\":null}]}";
  uint64_t ids[] = {9, 4};
  describe_diff(o.p, o.n, got, strlen(got), ids, 2, msg, sizeof msg);
  ck_assert_msg(strstr(msg, "row 1 (id 4) column \"a\"") != NULL, "%s", msg);
  free(o.p);
  body_free(&b);
  const char *bad = "{\"num_rows\":1,\"rows\":[{\"a\":\"unterminated}]}";
  ck_assert_int_ne(body_scan(bad, strlen(bad), &b), 0);
  body_free(&b);
}
END_TEST

int main(void) {
  g_index = tsup_load_index(TSUP_INDEX, "test_conformance");
  if (!g_index) return EXIT_FAILURE;
  const char *large = getenv("LNC_LARGE_FIXTURES");
  if (large && *large) {
    char path[4096];
    snprintf(path, sizeof path, "%s/index.json", large);
    g_large_index = tsup_load_index(path, "test_conformance");
    if (!g_large_index) return EXIT_FAILURE;
  }
  Suite *s = suite_create("conformance");
  TCase *tc = tcase_create("scanner");
  tcase_add_test(tc, test_scanner);
  suite_add_tcase(s, tc);
  tc = tcase_create("fixtures");
  tcase_set_timeout(tc, 900);
  tcase_add_loop_test(tc, test_fixture, 0, (int)json_array_size(json_object_get(g_index, "fixtures")));
  suite_add_tcase(s, tc);
  if (g_large_index) {
    tc = tcase_create("large");
    tcase_set_timeout(tc, 1800);
    tcase_add_loop_test(tc, test_large_fixture, 0,
                        (int)json_array_size(json_object_get(g_large_index, "fixtures")));
    suite_add_tcase(s, tc);
  }
  int failed = tsup_run(s);
  json_decref(g_index);
  json_decref(g_large_index);
  return failed;
}
