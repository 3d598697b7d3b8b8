/* Tags: a name for a dataset version (LanceDB `tbl.tags().create(name, version)`, read back
 * with `checkout(name)`), stored as `_refs/tags/<name>.json`:
 *
 *   {"branch": null, "version": 3, "createdAt": "...", "manifestSize": 367, "metadata": {}}
 *
 * Lance writes it with serde (pretty, keys in any order, fields added over releases), so the
 * reader takes "version" and "branch" from the top-level object and skips every other value
 * whatever it holds. A tag of another branch names a version of that branch's history
 * (`tree/<branch>/`), which lanced does not serve. */
#include "dataset.h"
#include "../util/parse.h"
#include "../util/error.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A tag file is a few hundred bytes; more than this is not one. */
#define TAG_FILE_LIMIT ((size_t)64 << 10)
/* Nesting a skipped value may have ("metadata" is an object of strings). */
#define TAG_MAX_DEPTH 16

bool lnc_ds_tag_name_ok(const char *tag) {
  /* Lance's rules for a ref: not empty; letters, digits, '.', '-', '_' (bytes of UTF-8
   * sequences taken as letters: Lance allows any alphanumeric, and none of them is '/' or
   * NUL); no leading or trailing '.', no "..", not ending in ".lock". */
  size_t n = strlen(tag);
  if (!n || n > 255 || tag[0] == '.' || tag[n - 1] == '.' || strstr(tag, "..")) return false;
  if (n >= 5 && !strcmp(tag + n - 5, ".lock")) return false;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)tag[i];
    if (!(c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' ||
          c == '-' || c == '_'))
      return false;
  }
  return true;
}

struct cur {
  const uint8_t *p, *end;
};

static void ws(struct cur *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

/* A string at c->p ('"' first): its raw bytes (escapes left as they are) in [*s, *s + *n). */
static bool str(struct cur *c, const uint8_t **s, size_t *n) {
  if (c->p >= c->end || *c->p != '"') return false;
  const uint8_t *b = ++c->p;
  while (c->p < c->end && *c->p != '"') c->p += *c->p == '\\' ? 2 : 1;
  if (c->p >= c->end) return false;
  *s = b;
  *n = (size_t)(c->p - b);
  c->p++;
  return true;
}

/* Skips one value of any kind, nested up to TAG_MAX_DEPTH (strings, numbers, literals,
 * objects and arrays; not checked beyond what finding its end needs). */
static bool skip(struct cur *c) {
  int depth = 0;
  do {
    ws(c);
    if (c->p >= c->end) return false;
    const uint8_t *s;
    size_t n;
    switch (*c->p) {
    case '{':
    case '[':
      if (++depth > TAG_MAX_DEPTH) return false;
      c->p++;
      continue; /* its first member (or its end) next */
    case '}':
    case ']':
      if (!depth--) return false;
      c->p++;
      break;
    case '"':
      if (!str(c, &s, &n)) return false;
      break;
    default: { /* a number or a literal: up to what may follow it */
      const uint8_t *b = c->p;
      while (c->p < c->end && *c->p && !strchr(",:}] \t\r\n", *c->p)) c->p++;
      if (c->p == b) return false; /* a stray ',' ':' or a NUL: no value here */
    }
    }
    ws(c);
    /* Inside a container, what follows a key or an item: its separator. */
    if (depth && c->p < c->end && (*c->p == ',' || *c->p == ':')) c->p++;
  } while (depth);
  return true;
}

int lnc_ds_tag_parse(const uint8_t *src, size_t len, const char *what, uint64_t *version, struct lnc_error *err) {
  struct cur c = {src, src + len};
  bool have = false, other_branch = false;
  ws(&c);
  if (c.p >= c.end || *c.p++ != '{') goto bad;
  for (;;) {
    ws(&c);
    if (c.p < c.end && *c.p == '}') break;
    const uint8_t *k;
    size_t kn;
    if (!str(&c, &k, &kn)) goto bad;
    ws(&c);
    if (c.p >= c.end || *c.p++ != ':') goto bad;
    ws(&c);
    if (kn == 7 && !memcmp(k, "version", 7)) {
      uint64_t v;
      const uint8_t *d = c.p;
      while (c.p < c.end && *c.p >= '0' && *c.p <= '9') c.p++;
      if (!lnc_parse_u64((const char *)d, (size_t)(c.p - d), &v) || !v) goto bad;
      *version = v;
      have = true;
    } else if (kn == 6 && !memcmp(k, "branch", 6)) {
      other_branch = !(c.end - c.p >= 4 && !memcmp(c.p, "null", 4));
      if (!skip(&c)) goto bad;
    } else if (!skip(&c)) {
      goto bad;
    }
    ws(&c);
    if (c.p < c.end && *c.p == ',')
      c.p++;
    else if (c.p >= c.end || *c.p != '}')
      goto bad;
  }
  c.p++;
  ws(&c);
  if (c.p != c.end) goto bad; /* one object, nothing after it */
  if (other_branch)
    return lnc_errf(err, LNC_EUNSUPPORTED, "%s tags a version of another branch, which lanced does not serve", what);
  if (!have) return lnc_errf(err, LNC_ECORRUPT, "%s has no version", what);
  return 0;
bad:
  return lnc_errf(err, LNC_ECORRUPT, "%s is not a tag file Lance writes (byte %zu)", what, (size_t)(c.p - src));
}

int lnc_ds_read_tag(const struct lnc_ds_loc *loc, const char *name, const char *tag, uint64_t *version,
                    struct lnc_error *err) {
  if (!lnc_ds_tag_name_ok(tag))
    return lnc_errf(err, LNC_EINVAL, "'%.80s' is not a tag name (letters, digits, '.', '-', '_')", tag);
  /* The file is named as Lance's object_store names it: every byte outside ASCII
   * percent-encoded ("é" is _refs/tags/%C3%A9.json), the rest as it is. */
  char rel[11 + 3 * 255 + 6], what[1200];
  size_t k = (size_t)snprintf(rel, sizeof rel, "_refs/tags/");
  for (const unsigned char *t = (const unsigned char *)tag; *t; t++) {
    if (*t < 0x80)
      rel[k++] = (char)*t;
    else
      k += (size_t)snprintf(rel + k, sizeof rel - k, "%%%02X", *t);
  }
  snprintf(rel + k, sizeof rel - k, ".json");
  snprintf(what, sizeof what, "%s: %s", name, rel);
  uint8_t *data;
  size_t len;
  struct lnc_error e2 = {0};
  int rc = lnc_ds_loc_read(loc, rel, TAG_FILE_LIMIT, name, &data, &len, &e2);
  if (rc == LNC_ENOTFOUND) return lnc_errf(err, LNC_ENOTFOUND, "%s: no tag '%s'", name, tag);
  if (rc) return lnc_errf(err, rc, "%s", e2.message);
  rc = lnc_ds_tag_parse(data, len, what, version, err);
  free(data);
  return rc;
}
