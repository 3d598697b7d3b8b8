/* Arrow structure checks shared by the JSON and IPC encoders. The type vocabulary itself
 * (enum lnc_atype, struct lnc_atype_info, lnc_arrow_parse_format) is public: lance.h. */
#ifndef LNC_ARROW_FORMAT_H
#define LNC_ARROW_FORMAT_H
#include "../lance.h"
#include <stdbool.h>

/* Kinds laid out as a list: validity, offsets and one child (a map's is its entries struct).
 * Only LNC_AT_LARGE_LIST has 64-bit offsets. */
static inline bool lnc_kind_is_list(enum lnc_atype k) {
  return k == LNC_AT_LIST || k == LNC_AT_LARGE_LIST || k == LNC_AT_MAP;
}

/* Kinds of variable-width bytes: strings and binaries, 32- or 64-bit offsets. */
static inline bool lnc_kind_is_bytes(enum lnc_atype k) {
  return k == LNC_AT_UTF8 || k == LNC_AT_LARGE_UTF8 || k == LNC_AT_BINARY || k == LNC_AT_LARGE_BINARY;
}

/* Number of buffers the C Data Interface gives an array of this kind (incl. validity). */
int lnc_arrow_n_buffers(enum lnc_atype kind);

/* Checks that `array` has the children, buffers and dictionary `schema` says it must have,
 * recursively, so encoders can index them without further checks. */
int lnc_arrow_validate(const struct ArrowSchema *schema, const struct ArrowArray *array,
                       struct lnc_error *err);

/* Whether a and b describe the same type all the way down: formats, children in order and
 * dictionaries (names and flags aside). Arrays of one can be gathered with the other. */
bool lnc_arrow_same_type(const struct ArrowSchema *a, const struct ArrowSchema *b);

/* The type for messages, in C Data format strings all the way down: a child list in <>, a
 * dictionary's values in []: "+l<g>", "+s<i,+l<u>>", "i[u]". Cut short with "..." at cap. */
const char *lnc_arrow_type_str(const struct ArrowSchema *s, char *buf, size_t cap);

#endif
