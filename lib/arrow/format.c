/* Arrow C Data Interface format-string parsing and structural validation, shared by the
 * JSON and IPC encoders (lib/arrow/json.c, lib/arrow/ipc.c). Done once per schema node so
 * the per-value loops only switch on a small enum. */
#include "format.h"
#include "builder.h"
#include "../util/error.h"
#include "../util/assert.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool parse_i32(const char **p, int32_t *out) {
  const char *s = *p;
  bool neg = false;
  if (*s == '-') {
    neg = true;
    s++;
  }
  if (*s < '0' || *s > '9') return false;
  int64_t v = 0;
  while (*s >= '0' && *s <= '9') {
    v = v * 10 + (*s++ - '0');
    if (v > INT32_MAX) return false;
  }
  *out = (int32_t)(neg ? -v : v);
  *p = s;
  return true;
}

static int unit_of(char c) {
  switch (c) {
  case 's': return LNC_TU_S;
  case 'm': return LNC_TU_MS;
  case 'u': return LNC_TU_US;
  case 'n': return LNC_TU_NS;
  default: return -1;
  }
}

int lnc_arrow_parse_format(const char *f, struct lnc_atype_info *t, struct lnc_error *err) {
  memset(t, 0, sizeof *t);
  if (!f) return lnc_errf(err, LNC_EUNSUPPORTED, "arrow schema without a format string");
  if (f[0] && !f[1]) {
    switch (f[0]) {
    case 'n': t->kind = LNC_AT_NULL; return 0;
    case 'b': t->kind = LNC_AT_BOOL; return 0;
    case 'c':
      t->kind = LNC_AT_INT;
      t->bits = 8;
      t->is_signed = true;
      return 0;
    case 'C':
      t->kind = LNC_AT_INT;
      t->bits = 8;
      return 0;
    case 's':
      t->kind = LNC_AT_INT;
      t->bits = 16;
      t->is_signed = true;
      return 0;
    case 'S':
      t->kind = LNC_AT_INT;
      t->bits = 16;
      return 0;
    case 'i':
      t->kind = LNC_AT_INT;
      t->bits = 32;
      t->is_signed = true;
      return 0;
    case 'I':
      t->kind = LNC_AT_INT;
      t->bits = 32;
      return 0;
    case 'l':
      t->kind = LNC_AT_INT;
      t->bits = 64;
      t->is_signed = true;
      return 0;
    case 'L':
      t->kind = LNC_AT_INT;
      t->bits = 64;
      return 0;
    case 'e':
      t->kind = LNC_AT_FLOAT;
      t->bits = 16;
      return 0;
    case 'f':
      t->kind = LNC_AT_FLOAT;
      t->bits = 32;
      return 0;
    case 'g':
      t->kind = LNC_AT_FLOAT;
      t->bits = 64;
      return 0;
    case 'z': t->kind = LNC_AT_BINARY; return 0;
    case 'Z': t->kind = LNC_AT_LARGE_BINARY; return 0;
    case 'u': t->kind = LNC_AT_UTF8; return 0;
    case 'U': t->kind = LNC_AT_LARGE_UTF8; return 0;
    default: break;
    }
  } else if (f[0] == 'w' && f[1] == ':') {
    const char *p = f + 2;
    if (parse_i32(&p, &t->width) && !*p && t->width >= 0) {
      t->kind = LNC_AT_FIXED_BINARY;
      t->bits = t->width * 8;
      return 0;
    }
  } else if (f[0] == 'd' && f[1] == ':') {
    const char *p = f + 2;
    int32_t bits = 128;
    if (parse_i32(&p, &t->precision) && *p++ == ',' && parse_i32(&p, &t->scale) &&
        (!*p || (*p++ == ',' && parse_i32(&p, &bits) && !*p)) &&
        (bits == 32 || bits == 64 || bits == 128 || bits == 256) && t->precision > 0 &&
        /* Arrow's Rust implementation, Lance's writer, keeps the scale in 8 bits; bounded, a
         * value's text is bounded (LNC_DECIMAL_STR_MAX). */
        t->scale >= LNC_DECIMAL_MIN_SCALE && t->scale <= LNC_DECIMAL_MAX_SCALE) {
      t->kind = LNC_AT_DECIMAL;
      t->bits = bits;
      return 0;
    }
  } else if (f[0] == 't' && f[1] && f[2]) {
    int u = unit_of(f[2]);
    switch (f[1]) {
    case 'd':
      if (f[3]) break;
      if (f[2] == 'D') {
        t->kind = LNC_AT_DATE32;
        t->bits = 32;
        return 0;
      }
      if (f[2] == 'm') {
        t->kind = LNC_AT_DATE64;
        t->bits = 64;
        return 0;
      }
      break;
    case 't':
      if (f[3] || u < 0) break;
      t->kind = LNC_AT_TIME;
      t->unit = u;
      t->bits = u <= LNC_TU_MS ? 32 : 64;
      return 0;
    case 's':
      if (u < 0 || f[3] != ':') break;
      t->kind = LNC_AT_TIMESTAMP;
      t->unit = u;
      t->bits = 64;
      t->tz = f + 4;
      return 0;
    case 'D':
      if (f[3] || u < 0) break;
      t->kind = LNC_AT_DURATION;
      t->unit = u;
      t->bits = 64;
      return 0;
    default: break;
    }
  } else if (f[0] == '+') {
    if (f[1] && !f[2]) {
      if (f[1] == 'l') {
        t->kind = LNC_AT_LIST;
        return 0;
      }
      if (f[1] == 'L') {
        t->kind = LNC_AT_LARGE_LIST;
        return 0;
      }
      if (f[1] == 's') {
        t->kind = LNC_AT_STRUCT;
        return 0;
      }
      if (f[1] == 'm') {
        t->kind = LNC_AT_MAP;
        return 0;
      }
    } else if (f[1] == 'w' && f[2] == ':') {
      const char *p = f + 3;
      if (parse_i32(&p, &t->width) && !*p && t->width >= 0) {
        t->kind = LNC_AT_FIXED_LIST;
        return 0;
      }
    }
  }
  return lnc_errf(err, LNC_EUNSUPPORTED, "unsupported arrow format \"%s\"", f);
}

bool lnc_arrow_same_type(const struct ArrowSchema *a, const struct ArrowSchema *b) {
  if (!a || !b || !a->format || !b->format || strcmp(a->format, b->format) != 0) return false;
  if (a->n_children != b->n_children || !a->dictionary != !b->dictionary) return false;
  if (a->dictionary && !lnc_arrow_same_type(a->dictionary, b->dictionary)) return false;
  for (int64_t i = 0; i < a->n_children; i++)
    if (!lnc_arrow_same_type(a->children[i], b->children[i])) return false;
  return true;
}

static void type_str(const struct ArrowSchema *s, char *buf, size_t cap, size_t *n, int depth) {
#define PUT(str) (*n += (size_t)snprintf(buf + (*n < cap ? *n : cap), *n < cap ? cap - *n : 0, "%s", str))
  if (depth > 32) { /* a schema that deep is not meant to be read in a message */
    PUT("...");
    return;
  }
  PUT(s && s->format ? s->format : "?");
  if (s && s->n_children > 0) {
    PUT("<");
    for (int64_t i = 0; i < s->n_children; i++) {
      if (i) PUT(",");
      type_str(s->children[i], buf, cap, n, depth + 1);
    }
    PUT(">");
  }
  if (s && s->dictionary) {
    PUT("[");
    type_str(s->dictionary, buf, cap, n, depth + 1);
    PUT("]");
  }
#undef PUT
}

const char *lnc_arrow_type_str(const struct ArrowSchema *s, char *buf, size_t cap) {
  LNC_ASSERT(cap >= 4);
  size_t n = 0;
  type_str(s, buf, cap, &n, 0);
  if (n >= cap) memcpy(buf + cap - 4, "...", 4);
  return buf;
}

int lnc_arrow_n_buffers(enum lnc_atype kind) {
  switch (kind) {
  case LNC_AT_NULL: return 0;
  case LNC_AT_BINARY:
  case LNC_AT_LARGE_BINARY:
  case LNC_AT_UTF8:
  case LNC_AT_LARGE_UTF8:
    return 3;
  case LNC_AT_STRUCT:
  case LNC_AT_FIXED_LIST: return 1;
  default: return 2; /* validity + values (or offsets for lists) */
  }
}

/* Whether buffer i of a is its values left in a file (lnc_filevals): a variable-width array's
 * bytes (buffer 2), or fixed-width items (buffer 1). */
static bool filevals_buffer(const struct ArrowArray *a, int i) {
  const struct lnc_filevals *fv = lnc_array_filevals(a);
  return fv && i == (fv->stride ? 1 : 2);
}

static int validate(const struct ArrowSchema *s, const struct ArrowArray *a, int depth,
                    struct lnc_error *err) {
  if (depth > 64) return lnc_errf(err, LNC_EUNSUPPORTED, "arrow nesting deeper than 64");
  if (!s || !a) return lnc_errf(err, LNC_EINVAL, "arrow schema or array missing");
  const char *name = s->name ? s->name : "";
  struct lnc_atype_info t;
  int rc = lnc_arrow_parse_format(s->format, &t, err);
  if (rc) {
    lnc_err_prefix(err, "field \"%s\"", name);
    return rc;
  }
  if (a->length < 0 || a->offset < 0)
    return lnc_errf(err, LNC_EINVAL, "field \"%s\": negative length or offset", name);
  if (s->dictionary) {
    if (t.kind != LNC_AT_INT)
      return lnc_errf(err, LNC_EINVAL, "field \"%s\": dictionary index type \"%s\" is not an integer",
                      name, s->format);
    if (!a->dictionary)
      return lnc_errf(err, LNC_EINVAL, "field \"%s\": dictionary array missing", name);
    rc = validate(s->dictionary, a->dictionary, depth + 1, err);
    if (rc) return rc;
  }
  int nb = lnc_arrow_n_buffers(t.kind);
  if (a->n_buffers < nb || (nb && !a->buffers))
    return lnc_errf(err, LNC_EINVAL, "field \"%s\" (%s): %lld buffers, expected %d", name,
                    s->format, (long long)a->n_buffers, nb);
  if (a->length > 0)
    for (int i = 1; i < nb; i++)
      if (!a->buffers[i] && !filevals_buffer(a, i)) /* values left in a file */
        return lnc_errf(err, LNC_EINVAL, "field \"%s\": buffer %d is NULL", name, i);
  if (nb && !a->buffers[0] && a->null_count > 0)
    return lnc_errf(err, LNC_EINVAL, "field \"%s\": nulls but no validity buffer", name);
  int64_t nc = 0;
  if (t.kind == LNC_AT_STRUCT)
    nc = s->n_children;
  else if (lnc_kind_is_list(t.kind) || t.kind == LNC_AT_FIXED_LIST)
    nc = 1;
  if (s->n_children != nc || a->n_children != nc || (nc && (!s->children || !a->children)))
    return lnc_errf(err, LNC_EINVAL, "field \"%s\" (%s): %lld/%lld children, expected %lld", name,
                    s->format, (long long)s->n_children, (long long)a->n_children, (long long)nc);
  /* Arrow's map: its one child is a struct of exactly key and value. */
  if (t.kind == LNC_AT_MAP && (!s->children[0]->format || strcmp(s->children[0]->format, "+s") != 0 ||
                               s->children[0]->n_children != 2))
    return lnc_errf(err, LNC_EINVAL, "map field \"%s\": entries are not a struct of key and value", name);
  for (int64_t i = 0; i < nc; i++) {
    const struct ArrowArray *c = a->children[i];
    int64_t need = a->offset + a->length;
    if (t.kind == LNC_AT_FIXED_LIST) need *= t.width;
    if (c && (t.kind == LNC_AT_STRUCT || t.kind == LNC_AT_FIXED_LIST) && c->length < need)
      return lnc_errf(err, LNC_EINVAL, "field \"%s\": child %lld has %lld values, needs %lld",
                      name, (long long)i, (long long)c->length, (long long)need);
    rc = validate(s->children[i], a->children[i], depth + 1, err);
    if (rc) return rc;
  }
  return 0;
}

int lnc_arrow_validate(const struct ArrowSchema *schema, const struct ArrowArray *array,
                       struct lnc_error *err) {
  return validate(schema, array, 0, err);
}
