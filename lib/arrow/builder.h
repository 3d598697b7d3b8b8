/* Allocation of Arrow C Data Interface structs that own their memory: each ArrowSchema /
 * ArrowArray made here frees its strings, buffers and children in its release callback.
 * Buffers handed to lnc_array_set_buffer become owned by the array (freed with free()). */
#ifndef LNC_ARROW_BUILDER_H
#define LNC_ARROW_BUILDER_H
#include <stddef.h>
#include <stdint.h>
#include "abi.h"

/* Initialises *out with copies of format and name and n_children zeroed child schemas
 * (each to be filled by the caller, e.g. recursively with this function). 0 or LNC_ENOMEM. */
int lnc_schema_init(struct ArrowSchema *out, const char *format, const char *name,
                    int64_t flags, int64_t n_children);
/* Replaces the name of a schema made by lnc_schema_init (LNC_EINVAL for any other). */
int lnc_schema_set_name(struct ArrowSchema *s, const char *name);
/* Sets Arrow metadata from key/value pairs (encoded per the C Data Interface). */
int lnc_schema_set_metadata(struct ArrowSchema *s, const char *const *keys,
                            const char *const *values, int32_t n);

/* Initialises *out with n_buffers NULL buffers and n_children child arrays whose release
 * is NULL until the caller fills them. 0 or LNC_ENOMEM. */
int lnc_array_init(struct ArrowArray *out, int64_t length, int64_t null_count,
                   int64_t n_buffers, int64_t n_children);
/* Gives buffer i to the array; the array frees it on release. */
void lnc_array_set_buffer(struct ArrowArray *a, int64_t i, void *buf);

/* The bytes of an array's values left in files (lnc_take_options.file_values_min).
 * Variable width (stride 0): value i, counted from the start of the array's buffers (before
 * its offset), is off[i] of maps[file ? file[i] : 0] (lib/io's mapped file), as long as the
 * offsets buffer says; the value buffer (buffers[2]) is NULL. Fixed width (the items of a
 * fixed-size list): entry i is the `per` items [i * per, (i + 1) * per), `stride` bytes at
 * off[i] of its file; the value buffer (buffers[1]) is NULL. Made by lib/take and the gathers
 * of lib/arrow; read by the IPC encoder, which names or reads the ranges. */
struct lnc_filemap;
struct lnc_filevals {
  struct lnc_filemap **maps; /* a reference each, dropped with the array */
  size_t n_maps;
  uint64_t *off;
  uint32_t *file;       /* NULL: every value is in maps[0] */
  uint64_t stride, per; /* fixed width: bytes and items per entry; 0 for variable width */
};
/* The mapped file holding value (fixed width: entry) i of fv. */
static inline struct lnc_filemap *lnc_filevals_map(const struct lnc_filevals *fv, uint64_t i) {
  return fv->maps[fv->file ? fv->file[i] : 0];
}
/* Gives fv (malloc'd, its arrays and descriptors too) to a made-here array; on LNC_EINVAL
 * (another array) fv is freed. */
int lnc_array_set_filevals(struct ArrowArray *a, struct lnc_filevals *fv);
/* a's file values, or NULL (for arrays made elsewhere too). */
const struct lnc_filevals *lnc_array_filevals(const struct ArrowArray *a);
/* Drops fv's mappings and frees it (NULL is fine). */
void lnc_filevals_free(struct lnc_filevals *fv);

/* Convenience: release if set, then zero. */
void lnc_schema_release(struct ArrowSchema *s);
void lnc_array_release(struct ArrowArray *a);

#endif
