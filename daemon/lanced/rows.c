/* The rows route: GET /files/<path>/rows?ids=..&columns=..&format=..[&version=N] and POST
 * with a JSON or protobuf TakeRequest body; <path> is a data file or a dataset directory. Parses and bounds the request, asks service.c for the rows,
 * encodes them as JSON rows, Arrow IPC or a protobuf TakeResponse. */
#include "lanced.h"
#include "service.h"
#include "metrics.h"
#include "request.h"
#include "routes.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "lanced/v1/lanced.pb-c.h"

/* A parsed request. ids and the column strings are owned here and freed by req_free. */
struct rows_req {
  uint64_t *ids;
  size_t n;
  bool has_version; /* a dataset version pinned by the body (?version= wins) */
  uint64_t version;
  char *tag; /* or a tag naming it (the body's "version" as a string, TakeRequest.tag) */
  char **cols;
  size_t ncols;
  bool row_ids; /* ids are Lance row ids (row_ids=), not offsets */
};

static void req_free(struct rows_req *q) {
  free(q->ids);
  free(q->tag);
  for (size_t i = 0; i < q->ncols; i++) free(q->cols[i]);
  free(q->cols);
}

/* "1,5,9": strictly digits separated by single commas; no signs, spaces or empty items. */
static int parse_ids(const char *s, uint64_t max, struct rows_req *q, struct ld_err *e) {
  if (!*s) return ld_errf(e, LD_INVALID, "ids is empty; want ids=1,5,9");
  size_t n = 1;
  for (const char *p = s; *p; p++) n += *p == ',';
  if (n > max)
    return ld_errf(e, LD_TOO_LARGE, "%zu ids is over max_ids_per_request (%llu)", n,
                   (unsigned long long)max);
  q->ids = malloc(n * sizeof *q->ids);
  if (!q->ids) return ld_errf(e, LD_EXHAUSTED, "out of memory");
  const char *p = s;
  for (size_t i = 0; i < n; i++) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (!lnc_parse_u64(p, len, &q->ids[i])) {
      ld_errf(e, LD_INVALID,
              "id #%zu '%.*s' is not a row id (want a decimal integer 0..18446744073709551615)",
              i + 1, (int)(len > 40 ? 40 : len), p);
      if (!len) ld_errf(e, LD_INVALID, "id #%zu is empty (stray comma?)", i + 1);
      return e->http;
    }
    p = end ? end + 1 : p + len;
  }
  q->n = n;
  return 0;
}

static int add_column(struct rows_req *q, const char *name, size_t len, struct ld_err *e) {
  if (!len) return ld_errf(e, LD_INVALID, "empty column name");
  char **grow = realloc(q->cols, (q->ncols + 1) * sizeof *grow);
  if (!grow) return ld_errf(e, LD_EXHAUSTED, "out of memory");
  q->cols = grow;
  if (!(q->cols[q->ncols] = strndup(name, len)))
    return ld_errf(e, LD_EXHAUSTED, "out of memory");
  q->ncols++;
  return 0;
}

static int parse_columns(const char *s, struct rows_req *q, struct ld_err *e) {
  while (1) {
    const char *end = strchr(s, ',');
    size_t len = end ? (size_t)(end - s) : strlen(s);
    if (add_column(q, s, len, e)) return e->http;
    if (!end) return 0;
    s = end + 1;
  }
}

/* ---- the ids array of a JSON body, without jansson ----------------------------------------
 * jansson makes a json_t per id (a malloc, a strtoll) and frees them all again: ~40 % of the
 * CPU of a 1000-id POST. The ids array is read here when it has the common plain shape: the
 * value of a top-level "ids" key (no other key with an escape or the same name), an array of
 * one or more decimal integers from 0 to 2^63-1 without sign, leading zero, fraction or
 * exponent. jansson then parses the body with that array replaced by [], so everything else
 * is checked as before. Any other shape (ids as strings, -0, a nested or escaped key, ...)
 * goes to jansson whole. Both ways give the same ids and the same errors; fuzz_request checks
 * that on every input. */
struct fast_ids {
  size_t at, end; /* the array's bytes in the body */
  size_t n;       /* ids in it (all counted, even over the limit) */
  uint64_t *ids;  /* the first min(n, max) of them, malloc'd */
};

static size_t skip_ws(const char *b, size_t i, size_t len) {
  while (i < len && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r')) i++;
  return i;
}

/* b[i] is '"': the index after the closing quote, or 0 when it never closes. */
static size_t skip_string(const char *b, size_t i, size_t len, bool *escaped) {
  for (i++; i < len; i++) {
    if (b[i] == '\\') {
      *escaped = true;
      i++;
    } else if (b[i] == '"') {
      return i + 1;
    }
  }
  return 0;
}

/* b[i] is '[': the plain integer array as above into f, or false (f->ids freed). */
static bool fast_array(const char *b, size_t i, size_t len, uint64_t max, struct fast_ids *f) {
  size_t cap = 0;
  f->at = i;
  f->n = 0;
  i = skip_ws(b, i + 1, len);
  for (;;) {
    if (i >= len || b[i] < '0' || b[i] > '9' || (b[i] == '0' && i + 1 < len && b[i + 1] >= '0' && b[i + 1] <= '9'))
      goto no;
    uint64_t v = 0;
    for (; i < len && b[i] >= '0' && b[i] <= '9'; i++) {
      if (v > ((uint64_t)INT64_MAX - (uint64_t)(b[i] - '0')) / 10) goto no; /* jansson's limit */
      v = v * 10 + (uint64_t)(b[i] - '0');
    }
    if (f->n < max) {
      if (f->n == cap) {
        cap = cap ? 2 * cap : 256;
        if (cap > max) cap = (size_t)max;
        uint64_t *g = realloc(f->ids, cap * sizeof *g);
        if (!g) goto no;
        f->ids = g;
      }
      f->ids[f->n] = v;
    }
    f->n++;
    i = skip_ws(b, i, len); /* a '.', 'e' or anything else after the digits: not ours */
    if (i < len && b[i] == ',') {
      i = skip_ws(b, i + 1, len);
    } else if (i < len && b[i] == ']') {
      f->end = i + 1;
      return true;
    } else {
      goto no;
    }
  }
no:
  free(f->ids);
  *f = (struct fast_ids){0};
  return false;
}

/* Finds the top-level "ids" member and reads its array; false = leave the body to jansson.
 * Only brackets and strings are tracked: jansson validates the rest of the body afterwards. */
static bool fast_ids_find(const char *b, size_t len, uint64_t max, struct fast_ids *f) {
  size_t i = skip_ws(b, 0, len);
  if (i >= len || b[i] != '{') return false;
  int depth = 1;
  bool want_key = true, found = false;
  for (i++; i < len && depth > 0;) {
    char ch = b[i];
    if (ch == '"') {
      bool escaped = false;
      size_t start = i, after = skip_string(b, i, len, &escaped);
      if (!after) break;
      i = after;
      if (depth != 1 || !want_key) continue;
      if (escaped) break; /* a key jansson would decode: maybe "ids" again */
      want_key = false;
      size_t colon = skip_ws(b, i, len);
      if (colon >= len || b[colon] != ':') break;
      if (after - start != 5 || memcmp(b + start, "\"ids\"", 5)) continue;
      size_t v = skip_ws(b, colon + 1, len);
      if (found || v >= len || b[v] != '[' || !fast_array(b, v, len, max, f)) break;
      found = true;
      i = f->end;
      continue;
    }
    if (ch == '{' || ch == '[') depth++;
    if (ch == '}' || ch == ']') depth--;
    if (ch == ',' && depth == 1) want_key = true;
    i++;
  }
  if (found && depth == 0) return true;
  free(f->ids);
  *f = (struct fast_ids){0};
  return false;
}

/* The body with the array f found replaced by []: what jansson checks in its place. */
static char *splice_empty(const char *b, size_t len, const struct fast_ids *f, size_t *out_len) {
  size_t n = f->at + 2 + (len - f->end);
  char *s = malloc(n);
  if (!s) return NULL;
  memcpy(s, b, f->at);
  memcpy(s + f->at, "[]", 2);
  memcpy(s + f->at + 2, b + f->end, len - f->end);
  *out_len = n;
  return s;
}

static int parse_json_body_with(const uint8_t *body, size_t len, uint64_t max_ids, bool fast,
                                struct rows_req *q, struct ld_err *e) {
  struct fast_ids f = {0};
  const char *text = (const char *)body;
  char *spliced = NULL;
  if (fast && fast_ids_find(text, len, max_ids, &f)) {
    if (!(spliced = splice_empty(text, len, &f, &len))) {
      free(f.ids);
      return ld_errf(e, LD_EXHAUSTED, "out of memory");
    }
    text = spliced;
  }
  json_error_t je;
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
  free(spliced);
  if (!root) {
    free(f.ids);
    return ld_errf(e, LD_INVALID, "body is not JSON: %s", je.text);
  }
  int rc = 0;
  json_t *ids = json_object_get(root, "ids"), *cols = json_object_get(root, "columns");
  json_t *rids = json_is_object(root) ? json_object_get(root, "row_ids") : NULL;
  if (rids && (ids || f.n)) {
    rc = ld_errf(e, LD_INVALID, "give ids or row_ids, not both");
    goto out;
  }
  if (rids) ids = rids, q->row_ids = true;
  const char *key = q->row_ids ? "row_ids" : "ids";
  if (!json_is_object(root) || !json_is_array(ids)) {
    rc = ld_errf(e, LD_INVALID, "want a body like {\"ids\":[1,5,9],\"columns\":[\"a\"]} (or \"row_ids\")");
    goto out;
  }
  size_t n = f.n ? f.n : json_array_size(ids);
  if (n == 0) {
    rc = ld_errf(e, LD_INVALID, "%s is empty", key);
    goto out;
  }
  if (n > max_ids) {
    rc = ld_errf(e, LD_TOO_LARGE, "%zu %s is over max_ids_per_request (%llu)", n, key,
                 (unsigned long long)max_ids);
    goto out;
  }
  if (f.n) {
    q->ids = f.ids;
    f.ids = NULL;
  } else if (!(q->ids = malloc(n * sizeof *q->ids))) {
    rc = ld_errf(e, LD_EXHAUSTED, "out of memory");
    goto out;
  }
  for (size_t i = 0; !f.n && i < n; i++) { /* (the fast path has read them already) */
    json_t *v = json_array_get(ids, i);
    /* Integers, or decimal strings for ids above 2^63 (and for JavaScript clients). */
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
      q->ids[i] = (uint64_t)json_integer_value(v);
    } else if (json_is_string(v) &&
               lnc_parse_u64(json_string_value(v), json_string_length(v), &q->ids[i])) {
    } else {
      rc = ld_errf(e, LD_INVALID, "%s[%zu] is not a non-negative integer", key, i);
      goto out;
    }
  }
  q->n = n;
  json_t *ver = json_object_get(root, "version");
  if (ver && json_is_string(ver)) { /* a tag: resolved with the path */
    if (!(q->tag = strdup(json_string_value(ver)))) {
      rc = ld_errf(e, LD_EXHAUSTED, "out of memory");
      goto out;
    }
  } else if (ver && !json_is_null(ver)) {
    if (!json_is_integer(ver) || json_integer_value(ver) <= 0) {
      rc = ld_errf(e, LD_INVALID, "version must be a positive integer or a tag");
      goto out;
    }
    q->has_version = true;
    q->version = (uint64_t)json_integer_value(ver);
  }
  if (cols && !json_is_null(cols)) {
    if (!json_is_array(cols)) {
      rc = ld_errf(e, LD_INVALID, "columns must be an array of strings");
      goto out;
    }
    for (size_t i = 0; i < json_array_size(cols); i++) {
      json_t *v = json_array_get(cols, i);
      if (!json_is_string(v)) {
        rc = ld_errf(e, LD_INVALID, "columns[%zu] is not a string", i);
        goto out;
      }
      if ((rc = add_column(q, json_string_value(v), json_string_length(v), e))) goto out;
    }
  }
out:
  free(f.ids);
  json_decref(root);
  return rc;
}

static int parse_json_body(const struct ld_req *r, struct rows_req *q, struct ld_err *e) {
  return parse_json_body_with(r->body.data, r->body.len, r->lim.max_ids, true, q, e);
}

int ld_rows_json_ids(const uint8_t *body, size_t len, uint64_t max_ids, bool fast, uint64_t **ids,
                     size_t *n, struct ld_err *e) {
  struct rows_req q = {0};
  int rc = parse_json_body_with(body, len, max_ids, fast, &q, e);
  *ids = rc ? NULL : q.ids;
  *n = rc ? 0 : q.n;
  if (!rc) q.ids = NULL;
  req_free(&q);
  return rc;
}

static int parse_proto_body(const struct ld_req *r, struct rows_req *q, struct ld_err *e);

int ld_rows_parse(const char *ids, const char *columns, const uint8_t *body, size_t len,
                  int kind, uint64_t max_ids, struct ld_err *e) {
  struct rows_req q = {0};
  struct ld_req r = {
      .body = {.data = (uint8_t *)body, .len = len},
      .lim = {.max_ids = max_ids}};
  int rc = 0;
  if (ids) rc = parse_ids(ids, max_ids, &q, e);
  if (!rc && columns) rc = parse_columns(columns, &q, e);
  req_free(&q);
  q = (struct rows_req){0};
  if (!rc && kind == 1)
    rc = parse_json_body(&r, &q, e);
  else if (!rc && kind == 2)
    rc = parse_proto_body(&r, &q, e);
  req_free(&q);
  return rc ? -1 : 0;
}

static int parse_proto_body(const struct ld_req *r, struct rows_req *q, struct ld_err *e) {
  Lanced__V1__TakeRequest *t = lanced__v1__take_request__unpack(NULL, r->body.len, r->body.data);
  if (!t) return ld_errf(e, LD_INVALID, "body is not a lanced.v1.TakeRequest");
  int rc = 0;
  const char *nul = ld_pb_nul_string(&lanced__v1__take_request__descriptor, r->body.data, r->body.len);
  if (nul)
    rc = ld_errf(e, LD_INVALID, "field %s holds a NUL byte", nul);
  else if (t->n_ids && t->n_row_ids)
    rc = ld_errf(e, LD_INVALID, "give ids or row_ids, not both");
  q->row_ids = t->n_row_ids > 0;
  uint64_t *tids = q->row_ids ? t->row_ids : t->ids;
  size_t tn = q->row_ids ? t->n_row_ids : t->n_ids;
  if (rc)
    ;
  else if (tn == 0)
    rc = ld_errf(e, LD_INVALID, "ids is empty");
  else if (tn > r->lim.max_ids)
    rc = ld_errf(e, LD_TOO_LARGE, "%zu ids is over max_ids_per_request (%llu)", tn,
                 (unsigned long long)r->lim.max_ids);
  else if (!(q->ids = malloc(tn * sizeof *q->ids)))
    rc = ld_errf(e, LD_EXHAUSTED, "out of memory");
  if (!rc) {
    memcpy(q->ids, tids, tn * sizeof *q->ids);
    q->n = tn;
    if (t->version) q->has_version = true, q->version = t->version; /* 0 = latest */
    if (t->tag && *t->tag && !(q->tag = strdup(t->tag)))
      rc = ld_errf(e, LD_EXHAUSTED, "out of memory");
    for (size_t i = 0; i < t->n_columns && !rc; i++)
      rc = add_column(q, t->columns[i], strlen(t->columns[i]), e);
  }
  lanced__v1__take_request__free_unpacked(t, NULL);
  return rc;
}

/* The format Accept prefers (RFC 9110 12.5.1): the highest q among the types served, Arrow
 * before protobuf before JSON at equal q; q=0 is "not acceptable". JSON when none is named,
 * for wildcards and for types we do not serve. */
static int accept_format(const char *accept) {
  static const struct {
    const char *type;
    int fmt;
  } served[] = {{"application/vnd.apache.arrow.stream", LD_F_ARROW},
                {"application/x-protobuf", LD_F_PROTO},
                {"application/protobuf", LD_F_PROTO},
                {"application/json", LD_F_JSON}};
  int best = LD_F_JSON, best_q = 0, rank = 99;
  for (const char *p = accept; p && *p;) {
    while (*p == ' ' || *p == '\t' || *p == ',') p++;
    size_t len = strcspn(p, ";, \t");
    for (size_t i = 0; i < sizeof served / sizeof served[0]; i++) {
      if (strlen(served[i].type) != len || strncasecmp(p, served[i].type, len)) continue;
      int q = ld_qvalue(p + len);
      if (q > best_q || (q == best_q && q > 0 && (int)i < rank)) best = served[i].fmt, best_q = q, rank = (int)i;
    }
    p += len;
    while (*p && *p != ',') p++; /* the parameters */
  }
  return best;
}

/* ?format= wins over Accept; JSON when neither says otherwise. */
static int pick_format(const struct ld_req *r, struct ld_err *e) {
  const char *f = ld_arg(r, "format");
  if (f) {
    if (!strcmp(f, "json")) return LD_F_JSON;
    if (!strcmp(f, "arrow")) return LD_F_ARROW;
    if (!strcmp(f, "proto") || !strcmp(f, "protobuf")) return LD_F_PROTO;
    ld_errf(e, LD_INVALID, "unknown format '%.40s' (json, arrow or proto)", f);
    return -1;
  }
  return accept_format(ld_header(r, "Accept"));
}

static const char *content_type(int format) {
  return format == LD_F_ARROW   ? "application/vnd.apache.arrow.stream"
         : format == LD_F_PROTO ? "application/x-protobuf"
                                : "application/json";
}

void ld_rows_handle(struct ld_req *r, const char *rel, struct ld_response *out) {
  struct ld_err e;
  struct rows_req q = {0};
  struct ld_take_result t = {0};
  int fmt = pick_format(r, &e);
  if (fmt < 0) return ld_json_error(out, &e);
  r->format = fmt;
  if (ld_path_check(rel, &e)) return ld_json_error(out, &e);

  if (!strcmp(r->method, "POST")) {
    if (ld_body_decode(r, LD_MEDIA_TYPE, &e)) {
      ld_json_error(out, &e);
      out->extra_name = "Accept-Encoding", out->extra_value = "gzip, identity";
      return;
    }
    const char *ct = ld_header(r, "Content-Type");
    bool proto = strcasestr(ct, "application/x-protobuf") || strcasestr(ct, "application/protobuf") ||
                 strcasestr(ct, "application/proto");
    if (proto ? parse_proto_body(r, &q, &e) : parse_json_body(r, &q, &e)) goto fail;
  } else {
    const char *ids = ld_arg(r, "ids");
    const char *rids = ld_arg(r, "row_ids");
    const char *cols = ld_arg(r, "columns");
    if (ids && rids) {
      ld_errf(&e, LD_INVALID, "give ids or row_ids, not both");
      goto fail;
    }
    if (!ids && !rids) {
      ld_errf(&e, LD_INVALID, "missing ids; want ?ids=1,5,9 (offsets) or ?row_ids=... (Lance row ids)");
      goto fail;
    }
    q.row_ids = rids != NULL;
    if (parse_ids(rids ? rids : ids, r->lim.max_ids, &q, &e)) goto fail;
    if (cols && parse_columns(cols, &q, &e)) goto fail;
  }

  /* ?blobs=descriptors returns Lance's blob descriptors instead of the bytes. */
  int blobs = LNC_BLOBS_BYTES;
  const char *bm = ld_arg(r, "blobs");
  if (bm && !strcmp(bm, "descriptors"))
    blobs = LNC_BLOBS_DESCRIPTORS;
  else if (bm && strcmp(bm, "bytes")) {
    ld_errf(&e, LD_INVALID, "unknown blobs mode '%.40s' (bytes or descriptors)", bm);
    goto fail;
  }
  /* ?version=N pins a dataset version (a POST JSON body may say "version":N instead). */
  uint64_t version;
  int vr = ld_version_arg(r, rel, &version, &e);
  if (vr < 0) goto fail;
  if (vr > 0 && (q.tag || q.has_version)) { /* the body's: a string there is a tag, as in Lance's checkout */
    version = q.has_version ? q.version : 0;
    if (ld_pin_tag(&r->call, rel, q.tag, &version, &e)) goto fail;
    vr = 0;
  }
  if (ld_service_take(&r->call, rel, vr == 0 ? &version : NULL, q.ids, q.n, (const char *const *)q.cols,
                      q.ncols, blobs, q.row_ids ? LNC_IDS_ROW_IDS : LNC_IDS_OFFSETS, r->lim.max_response,
                      fmt == LD_F_ARROW, &t.schema, &t.array, &t.stats, &e))
    goto fail;
  r->rows = q.n;
  ld_metrics_rows(q.n, &t.stats);
  /* Arrow leaves its large value buffers (images, embeddings) in the take's array, which moves
   * into the answer: HTTP/1.1 sends them from there (h1.c), one copy fewer (issue 34). */
  int rc = fmt == LD_F_PROTO   ? ld_proto_take_response_refs(&t, &out->body, &out->refs, &e)
           : fmt == LD_F_ARROW ? ld_service_encode_refs(&t.schema, &t.array, &out->body, &out->refs, &e)
                               : ld_service_encode(fmt, &t.schema, &t.array, r->lim.max_response, &out->body, &e);
  if (t.array.release) t.array.release(&t.array);
  if (t.schema.release) t.schema.release(&t.schema); /* a protobuf answer's refs may keep it */
  if (rc) goto fail;
  if (ld_response_len(out) > r->lim.max_response) {
    ld_errf(&e, LD_TOO_LARGE,
            "the answer is %zu bytes, over max_response_bytes (%llu); ask for fewer ids or columns",
            ld_response_len(out), (unsigned long long)r->lim.max_response);
    goto fail;
  }
  if (out->refs) ld_metrics_file_bytes(out->refs->file_bytes);
  req_free(&q);
  out->status = 200;
  out->content_type = content_type(fmt);
  return;
fail:
  req_free(&q);
  ld_json_error(out, &e);
}
