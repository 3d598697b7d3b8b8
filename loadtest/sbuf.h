/* Growable byte string for request texts and reports. Allocation failure is fatal (the
 * process exits): a load generator that cannot build a request has nothing useful to do,
 * and it spares every caller an error path on the hot loop. */
#ifndef LD_SBUF_H
#define LD_SBUF_H
#include <stddef.h>
#include <stdint.h>

typedef struct ld_sbuf {
  char *p;
  size_t len, cap;
} ld_sbuf;

void ld_sbuf_reserve(ld_sbuf *b, size_t extra); /* keeps room for a NUL too */
void ld_sbuf_append(ld_sbuf *b, const void *d, size_t n);
void ld_sbuf_puts(ld_sbuf *b, const char *s);
void ld_sbuf_putc(ld_sbuf *b, char c);
void ld_sbuf_u64(ld_sbuf *b, uint64_t v);
void ld_sbuf_clear(ld_sbuf *b); /* length 0, memory kept */
void ld_sbuf_free(ld_sbuf *b);
/* Decimal digits of v (1 for 0). */
unsigned ld_u64_digits(uint64_t v);

#endif
