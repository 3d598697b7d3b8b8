/* Dictionary-encoding of arrays liblance builds (see dict.c for why). */
#ifndef LNC_ARROW_DICT_H
#define LNC_ARROW_DICT_H
#include "abi.h"
#include "../lance.h"

/* Replaces *arr (a values array of Arrow format value_format, built by liblance, offset 0)
 * with an array of index_format indices into a dictionary of its distinct non-null values;
 * nulls stay nulls of the indices. On error *arr is unchanged. */
int lnc_dict_encode(struct ArrowArray *arr, const char *value_format, const char *index_format,
                    struct lnc_error *err);

#endif
