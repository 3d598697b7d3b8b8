/* Growable byte buffer helpers behind struct lnc_buf (declared in lance.h). Appends
 * return LNC_ENOMEM on allocation failure and leave the buffer as it was. */
#ifndef LNC_UTIL_BUF_H
#define LNC_UTIL_BUF_H
#include "../lance.h"
#include <stdarg.h>

int lnc_buf_reserve(struct lnc_buf *b, size_t extra);
int lnc_buf_append(struct lnc_buf *b, const void *p, size_t n);
int lnc_buf_putc(struct lnc_buf *b, char c);
int lnc_buf_puts(struct lnc_buf *b, const char *s);
int lnc_buf_printf(struct lnc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int lnc_buf_vprintf(struct lnc_buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Appends s as a JSON string literal (quotes and escapes included). */
int lnc_buf_json_str(struct lnc_buf *b, const char *s, size_t n);

/* Grows a malloc'd array *p of *cap elements of `elem` bytes to hold at least `need`
 * (doubling, 64 at first); LNC_ENOMEM (and *p unchanged) when that fails or overflows. */
int lnc_grow_array(void **p, size_t *cap, size_t need, size_t elem);

#endif
