/* FlatBuffers builder for the Arrow IPC metadata (see flatbuf.h). Objects are written back
 * to front, so every offset points to an object written earlier (higher address). */
#include "flatbuf.h"
#include <stdlib.h>
#include <string.h>

void lnc_fb_init(struct lnc_fb *b) {
  memset(b, 0, sizeof *b);
  b->minalign = 1;
}
void lnc_fb_free(struct lnc_fb *b) {
  free(b->buf);
  memset(b, 0, sizeof *b);
}
void lnc_fb_reset(struct lnc_fb *b) {
  b->size = 0;
  b->minalign = 1;
  b->oom = false;
  b->nfields = 0;
}

static bool grow(struct lnc_fb *b, size_t need) {
  if (b->oom) return false;
  if (b->buf && b->cap - b->size >= need) return true;
  size_t cap = b->cap ? b->cap : 1024;
  while (cap - b->size < need) cap *= 2;
  uint8_t *p = malloc(cap);
  if (!p) {
    b->oom = true;
    return false;
  }
  if (b->size) memcpy(p + cap - b->size, b->buf + b->cap - b->size, b->size);
  free(b->buf);
  b->buf = p;
  b->cap = cap;
  return true;
}

/* Pads so that after writing `extra` more bytes the size is a multiple of `align`. */
static bool prep(struct lnc_fb *b, size_t align, size_t extra) {
  if (align > b->minalign) b->minalign = align;
  size_t pad = (size_t)(-(b->size + extra)) & (align - 1);
  if (!grow(b, pad + extra)) return false;
  memset(b->buf + b->cap - b->size - pad, 0, pad);
  b->size += pad;
  return true;
}

static void push(struct lnc_fb *b, const void *p, size_t n) {
  if (!grow(b, n)) return;
  b->size += n;
  memcpy(b->buf + b->cap - b->size, p, n);
}

static bool push_scalar(struct lnc_fb *b, const void *p, size_t n) {
  if (!prep(b, n, 0)) return false;
  push(b, p, n);
  return true;
}

static lnc_fb_ref here(const struct lnc_fb *b) { return (lnc_fb_ref)b->size; }

static bool push_ref(struct lnc_fb *b, lnc_fb_ref ref) {
  if (!prep(b, 4, 0)) return false;
  uint32_t v = (uint32_t)(b->size + 4 - ref);
  push(b, &v, 4);
  return true;
}

lnc_fb_ref lnc_fb_string(struct lnc_fb *b, const char *s, size_t n) {
  if (!prep(b, 4, n + 1)) return 0;
  uint8_t z = 0;
  push(b, &z, 1);
  push(b, s, n);
  uint32_t len = (uint32_t)n;
  push(b, &len, 4);
  return here(b);
}

lnc_fb_ref lnc_fb_vec_refs(struct lnc_fb *b, const lnc_fb_ref *refs, size_t n) {
  if (!prep(b, 4, 4 * n)) return 0;
  for (size_t i = n; i-- > 0;) push_ref(b, refs[i]);
  uint32_t len = (uint32_t)n;
  push(b, &len, 4); /* aligned: 4*n bytes were written after a 4-aligned point */
  return here(b);
}

lnc_fb_ref lnc_fb_vec_structs(struct lnc_fb *b, const void *data, size_t n, size_t elem_size,
                              size_t align) {
  if (!prep(b, 4, elem_size * n)) return 0;
  if (!prep(b, align, elem_size * n)) return 0;
  push(b, data, elem_size * n);
  if (!prep(b, 4, 0)) return 0;
  uint32_t len = (uint32_t)n;
  push(b, &len, 4);
  return here(b);
}

void lnc_fb_table_start(struct lnc_fb *b) {
  b->table_start = b->size;
  b->nfields = 0;
  memset(b->field_pos, 0, sizeof b->field_pos);
}

static void track(struct lnc_fb *b, int field) {
  if (field >= LNC_FB_MAX_FIELDS) {
    b->oom = true;
    return;
  }
  b->field_pos[field] = (uint32_t)b->size;
  if (field + 1 > b->nfields) b->nfields = field + 1;
}

void lnc_fb_add_u8(struct lnc_fb *b, int field, uint8_t v) {
  if (push_scalar(b, &v, 1)) track(b, field);
}
void lnc_fb_add_i16(struct lnc_fb *b, int field, int16_t v) {
  if (push_scalar(b, &v, 2)) track(b, field);
}
void lnc_fb_add_i32(struct lnc_fb *b, int field, int32_t v) {
  if (push_scalar(b, &v, 4)) track(b, field);
}
void lnc_fb_add_i64(struct lnc_fb *b, int field, int64_t v) {
  if (push_scalar(b, &v, 8)) track(b, field);
}
void lnc_fb_add_ref(struct lnc_fb *b, int field, lnc_fb_ref ref) {
  if (push_ref(b, ref)) track(b, field);
}

lnc_fb_ref lnc_fb_table_end(struct lnc_fb *b) {
  /* soffset to the vtable, patched below */
  int32_t zero = 0;
  if (!push_scalar(b, &zero, 4)) return 0;
  lnc_fb_ref table = here(b);
  uint16_t vt[2 + LNC_FB_MAX_FIELDS];
  size_t vtn = 2 + (size_t)b->nfields;
  vt[0] = (uint16_t)(vtn * 2);
  vt[1] = (uint16_t)(table - b->table_start);
  for (int i = 0; i < b->nfields; i++)
    vt[2 + i] = b->field_pos[i] ? (uint16_t)(table - b->field_pos[i]) : 0;
  if (!prep(b, 2, vtn * 2)) return 0;
  push(b, vt, vtn * 2);
  int32_t soff = (int32_t)(here(b) - table);
  memcpy(b->buf + b->cap - table, &soff, 4);
  return table;
}

int lnc_fb_finish(struct lnc_fb *b, lnc_fb_ref root, const uint8_t **data, size_t *len) {
  if (!prep(b, b->minalign < 8 ? 8 : b->minalign, 4)) return 1;
  push_ref(b, root);
  if (b->oom) return 1;
  *data = b->buf + b->cap - b->size;
  *len = b->size;
  return 0;
}
