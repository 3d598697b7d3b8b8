/* A minimal FlatBuffers builder (back to front, like the reference implementation) for the
 * Arrow IPC metadata: tables with scalar/offset fields, strings, vectors of offsets and of
 * structs. No vtable sharing, every field written explicitly. Debian packages no C
 * flatbuffers library, and the Arrow messages need only this much. */
#ifndef LNC_ARROW_FLATBUF_H
#define LNC_ARROW_FLATBUF_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LNC_FB_MAX_FIELDS 16

/* A reference to an object already written: its distance from the end of the buffer. */
typedef uint32_t lnc_fb_ref;

struct lnc_fb {
  uint8_t *buf; /* data occupies buf[cap - size, cap) */
  size_t cap, size;
  size_t minalign;
  bool oom; /* sticky: any failed allocation; checked once by lnc_fb_finish */
  /* current table */
  size_t table_start;
  uint32_t field_pos[LNC_FB_MAX_FIELDS];
  int nfields;
};

void lnc_fb_init(struct lnc_fb *b);
void lnc_fb_free(struct lnc_fb *b);
void lnc_fb_reset(struct lnc_fb *b);

lnc_fb_ref lnc_fb_string(struct lnc_fb *b, const char *s, size_t n);
/* Vector of references (written in the given order). */
lnc_fb_ref lnc_fb_vec_refs(struct lnc_fb *b, const lnc_fb_ref *refs, size_t n);
/* Vector of n structs of elem_size bytes each, aligned to `align`, copied from data. */
lnc_fb_ref lnc_fb_vec_structs(struct lnc_fb *b, const void *data, size_t n, size_t elem_size,
                              size_t align);

void lnc_fb_table_start(struct lnc_fb *b);
void lnc_fb_add_u8(struct lnc_fb *b, int field, uint8_t v);
void lnc_fb_add_i16(struct lnc_fb *b, int field, int16_t v);
void lnc_fb_add_i32(struct lnc_fb *b, int field, int32_t v);
void lnc_fb_add_i64(struct lnc_fb *b, int field, int64_t v);
void lnc_fb_add_ref(struct lnc_fb *b, int field, lnc_fb_ref ref);
lnc_fb_ref lnc_fb_table_end(struct lnc_fb *b);

/* Writes the root offset; returns 0 and the finished bytes (valid until the next call on
 * b), or nonzero when an allocation failed along the way. */
int lnc_fb_finish(struct lnc_fb *b, lnc_fb_ref root, const uint8_t **data, size_t *len);

#endif
