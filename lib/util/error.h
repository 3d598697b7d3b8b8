/* Internal error helpers: fill a struct lnc_error with printf-style text and return the
 * code, so failure paths are one line: `return lnc_errf(err, LNC_ECORRUPT, "...", ...)`. */
#ifndef LNC_UTIL_ERROR_H
#define LNC_UTIL_ERROR_H
#include "../lance.h"

#if defined(__GNUC__)
#define LNC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define LNC_PRINTF(a, b)
#endif

int lnc_errf(struct lnc_error *err, int code, const char *fmt, ...) LNC_PRINTF(3, 4);
/* Prefixes the message already in err with more context ("column 3 page 1: ..."). */
int lnc_err_prefix(struct lnc_error *err, const char *fmt, ...) LNC_PRINTF(2, 3);
/* The code for a failed open/stat: ENOENT/ENOTDIR -> LNC_ENOTFOUND; EACCES/EPERM, and
 * EXDEV/ELOOP (openat2 RESOLVE_BENEATH refusing a path that leaves the root) -> LNC_EACCES;
 * ENOMEM -> LNC_ENOMEM; anything else LNC_EIO. */
int lnc_code_from_errno(int e);

#endif
