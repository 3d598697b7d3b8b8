/* Error message formatting and code names. */
#include "error.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int lnc_errf(struct lnc_error *err, int code, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->code = code;
  }
  return code;
}

int lnc_err_prefix(struct lnc_error *err, const char *fmt, ...) {
  if (!err) return 0;
  char prefix[256], old[sizeof err->message];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(old, err->message, sizeof old);
  if (snprintf(err->message, sizeof err->message, "%s: %s", prefix, old) < 0) err->message[0] = 0;
  return err->code;
}

int lnc_code_from_errno(int e) {
  switch (e) {
  case ENOENT:
  case ENOTDIR: return LNC_ENOTFOUND;
  case EACCES:
  case EPERM: return LNC_EACCES;
  case EXDEV:
  case ELOOP: return LNC_EACCES; /* openat2 RESOLVE_BENEATH: leaves the root */
  case ENOMEM: return LNC_ENOMEM;
  default: return LNC_EIO;
  }
}

const char *lnc_code_name(int code) {
  switch (code) {
  case LNC_OK: return "ok";
  case LNC_EINVAL: return "invalid_argument";
  case LNC_ERANGE: return "out_of_range";
  case LNC_EIO: return "io_error";
  case LNC_ENOTFOUND: return "not_found";
  case LNC_ECORRUPT: return "corrupt_file";
  case LNC_EUNSUPPORTED: return "unsupported";
  case LNC_ENOMEM: return "resource_exhausted";
  case LNC_ELIMIT: return "limit_exceeded";
  case LNC_EAGAIN: return "would_block";
  case LNC_EACCES: return "permission_denied";
  default: return "internal";
  }
}
