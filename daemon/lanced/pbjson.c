/* proto3 JSON for protobuf-c messages, driven by the generated descriptors so every message
 * in lanced.proto gets the canonical mapping for free: lowerCamelCase names (original names
 * accepted on input), 64-bit integers as strings, bytes as base64, enums by name, default
 * values omitted. Used by the Connect JSON codec (connect.c). */
#include "lanced.h"
#include "routes.h"
#include "util/pbwire.h"
#include <jansson.h>
#include <math.h>
#include <protobuf-c/protobuf-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEMBER(m, off) ((char *)(m) + (off))

static void camel(const char *name, char *out, size_t outlen) {
  size_t j = 0;
  bool up = false;
  for (size_t i = 0; name[i] && j + 1 < outlen; i++) {
    if (name[i] == '_') {
      up = true;
      continue;
    }
    out[j++] = up && name[i] >= 'a' && name[i] <= 'z' ? (char)(name[i] - 32) : name[i];
    up = false;
  }
  out[j] = 0;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void write_base64(struct lnc_buf *o, const uint8_t *p, size_t n) {
  ld_buf_puts(o, "\"");
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
                 (i + 2 < n ? p[i + 2] : 0);
    char q[4] = {b64[v >> 18], b64[(v >> 12) & 63], i + 1 < n ? b64[(v >> 6) & 63] : '=',
                 i + 2 < n ? b64[v & 63] : '='};
    ld_buf_append(o, q, 4);
  }
  ld_buf_puts(o, "\"");
}

static void write_double(struct lnc_buf *o, double d, bool is_float) {
  if (isnan(d))
    ld_buf_puts(o, "\"NaN\"");
  else if (isinf(d))
    ld_buf_puts(o, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
  else
    ld_buf_printf(o, is_float ? "%.9g" : "%.17g", d);
}

static void write_msg(const ProtobufCMessage *m, struct lnc_buf *o);

/* One value of field f stored at p. */
static void write_value(const ProtobufCFieldDescriptor *f, const void *p, struct lnc_buf *o) {
  switch (f->type) {
  case PROTOBUF_C_TYPE_INT32:
  case PROTOBUF_C_TYPE_SINT32:
  case PROTOBUF_C_TYPE_SFIXED32:
    ld_buf_printf(o, "%d", *(const int32_t *)p);
    break;
  case PROTOBUF_C_TYPE_UINT32:
  case PROTOBUF_C_TYPE_FIXED32:
    ld_buf_printf(o, "%u", *(const uint32_t *)p);
    break;
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_SINT64:
  case PROTOBUF_C_TYPE_SFIXED64:
    ld_buf_printf(o, "\"%lld\"", (long long)*(const int64_t *)p);
    break;
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_FIXED64:
    ld_buf_printf(o, "\"%llu\"", (unsigned long long)*(const uint64_t *)p);
    break;
  case PROTOBUF_C_TYPE_FLOAT: write_double(o, *(const float *)p, true); break;
  case PROTOBUF_C_TYPE_DOUBLE: write_double(o, *(const double *)p, false); break;
  case PROTOBUF_C_TYPE_BOOL: ld_buf_puts(o, *(const protobuf_c_boolean *)p ? "true" : "false"); break;
  case PROTOBUF_C_TYPE_ENUM: {
    int v = *(const int *)p;
    const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(f->descriptor, v);
    if (ev)
      ld_buf_json_str(o, ev->name, strlen(ev->name));
    else
      ld_buf_printf(o, "%d", v);
    break;
  }
  case PROTOBUF_C_TYPE_STRING: {
    const char *s = *(char *const *)p;
    ld_buf_json_str(o, s ? s : "", s ? strlen(s) : 0);
    break;
  }
  case PROTOBUF_C_TYPE_BYTES: {
    const ProtobufCBinaryData *b = p;
    write_base64(o, b->data, b->len);
    break;
  }
  case PROTOBUF_C_TYPE_MESSAGE: write_msg(*(ProtobufCMessage *const *)p, o); break;
  }
}

static size_t elem_size(ProtobufCType t) {
  switch (t) {
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_SINT64:
  case PROTOBUF_C_TYPE_SFIXED64:
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_FIXED64:
  case PROTOBUF_C_TYPE_DOUBLE:
    return 8;
  case PROTOBUF_C_TYPE_BOOL: return sizeof(protobuf_c_boolean);
  case PROTOBUF_C_TYPE_ENUM: return sizeof(int);
  case PROTOBUF_C_TYPE_STRING: return sizeof(char *);
  case PROTOBUF_C_TYPE_BYTES: return sizeof(ProtobufCBinaryData);
  case PROTOBUF_C_TYPE_MESSAGE: return sizeof(void *);
  default: return 4;
  }
}

/* proto3 implicit presence: a field at its zero value is not written. */
static bool is_default(const ProtobufCFieldDescriptor *f, const void *p) {
  switch (f->type) {
  case PROTOBUF_C_TYPE_STRING: {
    const char *s = *(char *const *)p;
    return !s || !*s;
  }
  case PROTOBUF_C_TYPE_BYTES: return ((const ProtobufCBinaryData *)p)->len == 0;
  case PROTOBUF_C_TYPE_MESSAGE: return *(void *const *)p == NULL;
  case PROTOBUF_C_TYPE_FLOAT: return *(const float *)p == 0 && !signbit(*(const float *)p);
  case PROTOBUF_C_TYPE_DOUBLE: return *(const double *)p == 0 && !signbit(*(const double *)p);
  default: {
    size_t n = elem_size(f->type);
    static const uint8_t zero[8];
    return memcmp(p, zero, n) == 0;
  }
  }
}

static void write_msg(const ProtobufCMessage *m, struct lnc_buf *o) {
  const ProtobufCMessageDescriptor *d = m->descriptor;
  bool first = true;
  ld_buf_puts(o, "{");
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    const void *p = MEMBER(m, f->offset);
    size_t n = 1;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
      n = *(const size_t *)MEMBER(m, f->quantifier_offset);
      if (!n) continue;
    } else if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
      if (*(const uint32_t *)MEMBER(m, f->quantifier_offset) != f->id) continue;
    } else if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset &&
               f->type != PROTOBUF_C_TYPE_STRING && f->type != PROTOBUF_C_TYPE_MESSAGE) {
      if (!*(const protobuf_c_boolean *)MEMBER(m, f->quantifier_offset)) continue;
    } else if (is_default(f, p)) {
      continue;
    }
    char name[128];
    camel(f->name, name, sizeof name);
    ld_buf_printf(o, "%s\"%s\":", first ? "" : ",", name);
    first = false;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
      const char *arr = *(char *const *)p;
      size_t es = elem_size(f->type);
      ld_buf_puts(o, "[");
      for (size_t k = 0; k < n; k++) {
        if (k) ld_buf_puts(o, ",");
        write_value(f, arr + k * es, o);
      }
      ld_buf_puts(o, "]");
    } else {
      write_value(f, p, o);
    }
  }
  ld_buf_puts(o, "}");
}

int ld_pbjson_write(const struct ProtobufCMessage *m, struct lnc_buf *out) {
  write_msg(m, out);
  return 0;
}

/* ---- reading -------------------------------------------------------------------------------- */
static int b64val(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;
  if (c == '/' || c == '_') return 63;
  return -1;
}

static int read_base64(const char *s, size_t n, ProtobufCBinaryData *out) {
  while (n && s[n - 1] == '=') n--;
  uint8_t *p = malloc(n * 3 / 4 + 3);
  if (!p) return -1;
  size_t len = 0;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < n; i++) {
    int v = b64val(s[i]);
    if (v < 0) {
      free(p);
      return -1;
    }
    acc = acc << 6 | (uint32_t)v;
    bits += 6;
    if (bits >= 8) bits -= 8, p[len++] = (uint8_t)(acc >> bits);
  }
  out->data = p;
  out->len = len;
  return 0;
}

static int read_msg(const ProtobufCMessageDescriptor *d, json_t *obj, ProtobufCMessage **out,
                    char *msg, size_t msglen);

static int read_int(json_t *v, bool is_signed, int64_t *si, uint64_t *ui) {
  if (json_is_integer(v)) {
    json_int_t x = json_integer_value(v);
    if (!is_signed && x < 0) return -1;
    *si = x, *ui = (uint64_t)x;
    return 0;
  }
  if (json_is_real(v)) { /* 1e3 is a valid JSON spelling of an integer */
    double x = json_real_value(v);
    if (x != floor(x) || (!is_signed && x < 0) || fabs(x) > 9.007199254740992e15) return -1;
    *si = (int64_t)x, *ui = (uint64_t)x;
    return 0;
  }
  if (json_is_string(v)) {
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);
    bool neg = is_signed && n && s[0] == '-';
    uint64_t u;
    if (!lnc_parse_u64(s + neg, n - neg, &u)) return -1;
    if (is_signed && u > (uint64_t)INT64_MAX + neg) return -1;
    *ui = u;
    *si = neg ? (int64_t)(0 - u) : (int64_t)u;
    return 0;
  }
  return -1;
}

static int read_value(const ProtobufCFieldDescriptor *f, json_t *v, void *p, char *msg,
                      size_t msglen) {
  int64_t si;
  uint64_t ui;
  switch (f->type) {
  case PROTOBUF_C_TYPE_INT32:
  case PROTOBUF_C_TYPE_SINT32:
  case PROTOBUF_C_TYPE_SFIXED32:
    if (read_int(v, true, &si, &ui) || si < INT32_MIN || si > INT32_MAX) goto bad;
    *(int32_t *)p = (int32_t)si;
    return 0;
  case PROTOBUF_C_TYPE_UINT32:
  case PROTOBUF_C_TYPE_FIXED32:
    if (read_int(v, false, &si, &ui) || ui > UINT32_MAX) goto bad;
    *(uint32_t *)p = (uint32_t)ui;
    return 0;
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_SINT64:
  case PROTOBUF_C_TYPE_SFIXED64:
    if (read_int(v, true, &si, &ui)) goto bad;
    *(int64_t *)p = si;
    return 0;
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_FIXED64:
    if (read_int(v, false, &si, &ui)) goto bad;
    *(uint64_t *)p = ui;
    return 0;
  case PROTOBUF_C_TYPE_FLOAT:
  case PROTOBUF_C_TYPE_DOUBLE: {
    double x;
    if (json_is_number(v))
      x = json_number_value(v);
    else if (json_is_string(v) && !strcmp(json_string_value(v), "NaN"))
      x = NAN;
    else if (json_is_string(v) && !strcmp(json_string_value(v), "Infinity"))
      x = INFINITY;
    else if (json_is_string(v) && !strcmp(json_string_value(v), "-Infinity"))
      x = -INFINITY;
    else
      goto bad;
    if (f->type == PROTOBUF_C_TYPE_FLOAT)
      *(float *)p = (float)x;
    else
      *(double *)p = x;
    return 0;
  }
  case PROTOBUF_C_TYPE_BOOL:
    if (!json_is_boolean(v)) goto bad;
    *(protobuf_c_boolean *)p = json_is_true(v);
    return 0;
  case PROTOBUF_C_TYPE_ENUM: {
    if (json_is_string(v)) {
      const ProtobufCEnumValue *ev =
          protobuf_c_enum_descriptor_get_value_by_name(f->descriptor, json_string_value(v));
      if (!ev) goto bad;
      *(int *)p = ev->value;
    } else if (json_is_integer(v)) {
      *(int *)p = (int)json_integer_value(v);
    } else
      goto bad;
    return 0;
  }
  case PROTOBUF_C_TYPE_STRING: {
    if (!json_is_string(v)) goto bad;
    char *s = malloc(json_string_length(v) + 1);
    if (!s) goto bad;
    memcpy(s, json_string_value(v), json_string_length(v) + 1);
    *(char **)p = s;
    return 0;
  }
  case PROTOBUF_C_TYPE_BYTES:
    if (!json_is_string(v) ||
        read_base64(json_string_value(v), json_string_length(v), (ProtobufCBinaryData *)p))
      goto bad;
    return 0;
  case PROTOBUF_C_TYPE_MESSAGE:
    if (!json_is_object(v)) goto bad;
    return read_msg(f->descriptor, v, (ProtobufCMessage **)p, msg, msglen);
  }
bad:
  snprintf(msg, msglen, "field %s: value of the wrong type or out of range", f->name);
  return -1;
}

static const ProtobufCFieldDescriptor *find_field(const ProtobufCMessageDescriptor *d,
                                                  const char *key) {
  char name[128];
  for (unsigned i = 0; i < d->n_fields; i++) {
    camel(d->fields[i].name, name, sizeof name);
    if (!strcmp(key, name) || !strcmp(key, d->fields[i].name)) return &d->fields[i];
  }
  return NULL;
}

static int read_msg(const ProtobufCMessageDescriptor *d, json_t *obj, ProtobufCMessage **out,
                    char *msg, size_t msglen) {
  ProtobufCMessage *m = calloc(1, d->sizeof_message);
  if (!m) return snprintf(msg, msglen, "out of memory"), -1;
  d->message_init(m);
  *out = m;
  const char *key;
  json_t *v;
  json_object_foreach(obj, key, v) {
    const ProtobufCFieldDescriptor *f = find_field(d, key);
    if (!f || json_is_null(v)) continue; /* unknown fields are ignored, as by most peers */
    void *p = MEMBER(m, f->offset);
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
      if (!json_is_array(v)) return snprintf(msg, msglen, "field %s: want an array", key), -1;
      size_t n = json_array_size(v), es = elem_size(f->type);
      size_t *count = (size_t *)MEMBER(m, f->quantifier_offset);
      if (*count) return snprintf(msg, msglen, "field %s given twice", key), -1;
      char *arr = calloc(n ? n : 1, es);
      if (!arr) return snprintf(msg, msglen, "out of memory"), -1;
      *(char **)p = arr;
      for (size_t k = 0; k < n; k++) {
        if (read_value(f, json_array_get(v, k), arr + k * es, msg, msglen)) return -1;
        *count = k + 1; /* only filled elements are ever freed */
      }
    } else {
      if (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_MESSAGE)
        *(void **)p = NULL; /* the proto3 default is static; never free it */
      if (read_value(f, v, p, msg, msglen)) return -1;
      if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
        *(uint32_t *)MEMBER(m, f->quantifier_offset) = f->id;
      else if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset &&
               f->type != PROTOBUF_C_TYPE_STRING && f->type != PROTOBUF_C_TYPE_MESSAGE)
        *(protobuf_c_boolean *)MEMBER(m, f->quantifier_offset) = 1;
    }
  }
  /* Strings never set keep NULL from read or the static default from init; make unset ones
   * point at "" the way protobuf-c's unpacker does, without owning it. */
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    if (f->type == PROTOBUF_C_TYPE_STRING && f->label != PROTOBUF_C_LABEL_REPEATED &&
        !*(char **)MEMBER(m, f->offset))
      *(const char **)MEMBER(m, f->offset) = protobuf_c_empty_string;
  }
  return 0;
}

void ld_pbjson_free(struct ProtobufCMessage *m) {
  if (!m) return;
  const ProtobufCMessageDescriptor *d = m->descriptor;
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    void *p = MEMBER(m, f->offset);
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
      size_t n = *(size_t *)MEMBER(m, f->quantifier_offset);
      char *arr = *(char **)p;
      for (size_t k = 0; arr && k < n; k++) {
        void *ep = arr + k * elem_size(f->type);
        if (f->type == PROTOBUF_C_TYPE_STRING)
          free(*(char **)ep);
        else if (f->type == PROTOBUF_C_TYPE_BYTES)
          free(((ProtobufCBinaryData *)ep)->data);
        else if (f->type == PROTOBUF_C_TYPE_MESSAGE)
          ld_pbjson_free(*(ProtobufCMessage **)ep);
      }
      free(arr);
      continue;
    }
    if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
        *(uint32_t *)MEMBER(m, f->quantifier_offset) != f->id)
      continue;
    if (f->type == PROTOBUF_C_TYPE_STRING) {
      char *s = *(char **)p;
      if (s != protobuf_c_empty_string && s != f->default_value) free(s);
    } else if (f->type == PROTOBUF_C_TYPE_BYTES) {
      ProtobufCBinaryData *b = p;
      if (!f->default_value || b->data != ((const ProtobufCBinaryData *)f->default_value)->data)
        free(b->data);
    } else if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
      ld_pbjson_free(*(ProtobufCMessage **)p);
    }
  }
  free(m);
}

/* ---- strings of a binary body ------------------------------------------------------------ */
const char *ld_pb_nul_string(const struct ProtobufCMessageDescriptor *d, const uint8_t *p, size_t len) {
  size_t pos = 0;
  struct lnc_pb_field f;
  /* Damaged bytes end the look: protobuf-c unpacked them, and judges them itself. */
  while (lnc_pb_next(p, len, &pos, &f) > 0) {
    if (f.wire != LNC_PB_LEN || f.number > UINT32_MAX) continue;
    const ProtobufCFieldDescriptor *fd = protobuf_c_message_descriptor_get_field(d, (unsigned)f.number);
    if (fd && fd->type == PROTOBUF_C_TYPE_STRING && memchr(f.data, 0, f.len)) return fd->name;
  }
  return NULL;
}

struct ProtobufCMessage *ld_pbjson_read(const struct ProtobufCMessageDescriptor *d,
                                        const char *text, size_t len, char *msg, size_t msglen) {
  json_error_t je;
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je); /* as the REST body is read */
  if (!root) {
    snprintf(msg, msglen, "body is not JSON: %s", je.text);
    return NULL;
  }
  ProtobufCMessage *m = NULL;
  if (!json_is_object(root)) {
    snprintf(msg, msglen, "want a JSON object for %s", d->name);
  } else if (read_msg(d, root, &m, msg, msglen)) {
    ld_pbjson_free(m);
    m = NULL;
  }
  json_decref(root);
  return m;
}
