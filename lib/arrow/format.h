/* Parsed Arrow C Data Interface format strings, shared by the JSON and IPC encoders so each
 * parses a schema once (not per value) and both accept exactly the same set of types. */
#ifndef LNC_ARROW_FORMAT_H
#define LNC_ARROW_FORMAT_H
#include "../lance.h"
#include <stdbool.h>

enum lnc_atype {
  LNC_AT_NULL,
  LNC_AT_BOOL,
  LNC_AT_INT,          /* bits 8/16/32/64, is_signed */
  LNC_AT_FLOAT,        /* bits 16/32/64 */
  LNC_AT_BINARY,       /* int32 offsets */
  LNC_AT_LARGE_BINARY, /* int64 offsets */
  LNC_AT_UTF8,
  LNC_AT_LARGE_UTF8,
  LNC_AT_FIXED_BINARY, /* width bytes */
  LNC_AT_DECIMAL,      /* precision, scale, bits 32/64/128/256 */
  LNC_AT_DATE32,       /* days */
  LNC_AT_DATE64,       /* milliseconds */
  LNC_AT_TIME,         /* unit, bits 32 (s, ms) / 64 (us, ns) */
  LNC_AT_TIMESTAMP,    /* unit, tz (NULL or "" = none; points into the format string) */
  LNC_AT_DURATION,     /* unit */
  LNC_AT_LIST,
  LNC_AT_LARGE_LIST,
  LNC_AT_FIXED_LIST,   /* width items */
  LNC_AT_STRUCT
};

enum lnc_tunit { LNC_TU_S = 0, LNC_TU_MS = 1, LNC_TU_US = 2, LNC_TU_NS = 3 }; /* = Arrow's TimeUnit */

struct lnc_atype_info {
  enum lnc_atype kind;
  int bits;        /* INT, FLOAT, DECIMAL, TIME; byte width*8 of fixed-width values */
  bool is_signed;  /* INT */
  int unit;        /* enum lnc_tunit for TIME, TIMESTAMP, DURATION */
  int32_t width;   /* FIXED_BINARY bytes, FIXED_LIST items */
  int32_t precision, scale; /* DECIMAL */
  const char *tz;  /* TIMESTAMP: the zone text after the ':' (may be empty), else NULL */
};

/* Parses one format string. Dictionary-encoded fields carry their index type in `format`;
 * callers check schema->dictionary themselves. Unknown or malformed → LNC_EUNSUPPORTED. */
int lnc_arrow_parse_format(const char *format, struct lnc_atype_info *out, struct lnc_error *err);

/* Number of buffers the C Data Interface gives an array of this kind (incl. validity). */
int lnc_arrow_n_buffers(enum lnc_atype kind);

/* Checks that `array` has the children, buffers and dictionary `schema` says it must have,
 * recursively, so encoders can index them without further checks. */
int lnc_arrow_validate(const struct ArrowSchema *schema, const struct ArrowArray *array,
                       struct lnc_error *err);

#endif
