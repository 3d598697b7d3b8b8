/* lnc_encode_json: a record batch (Arrow C Data Interface) → the JSON rows body specified in
 * docs/json-rows.md, byte for byte. This is the daemon's response hot path: the schema is
 * compiled once into a node tree, values are formatted by hand into reserved output space,
 * and only floats go through snprintf/strtod (shortest round-trip digits). */
#include "format.h"
#include "../util/buf.h"
#include "../util/error.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/utf8.h"

enum { TZ_UTC = 0,
       TZ_OFFSET = 1 };

struct jnode {
  struct lnc_atype_info t;
  const struct ArrowArray *a;
  const struct jnode *dict; /* dictionary-encoded: values are indices into dict->a */
  struct jnode *children;
  int64_t nchildren;
  size_t key_off, key_len; /* `"name":` in ctx.keys */
  const char *key;
  int tz_mode;
  int32_t tz_secs;   /* TZ_OFFSET: seconds east of UTC */
  char tz_text[8];   /* "+05:30" */
  bool has_validity; /* buffer 0 present and null_count != 0 */
};

struct jctx {
  struct lnc_buf *out;
  struct lnc_error *err;
  struct lnc_buf keys;
  struct jnode *nodes;
  size_t nnodes, used;
};

#define NEED(o, n)                                                              \
  do {                                                                          \
    if ((o)->cap - (o)->len < (size_t)(n) && lnc_buf_reserve((o), (size_t)(n))) \
      return LNC_ENOMEM;                                                        \
  } while (0)

/* ---- small formatting helpers ------------------------------------------------------- */
static const char DIGITS2[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Writes v in decimal at p; returns the end. */
static inline char *put_u64(char *p, uint64_t v) {
  char tmp[20];
  char *e = tmp + sizeof tmp, *s = e;
  while (v >= 100) {
    unsigned r = (unsigned)(v % 100);
    v /= 100;
    s -= 2;
    memcpy(s, DIGITS2 + 2 * r, 2);
  }
  if (v >= 10) {
    s -= 2;
    memcpy(s, DIGITS2 + 2 * v, 2);
  } else {
    *--s = (char)('0' + v);
  }
  size_t n = (size_t)(e - s);
  memcpy(p, s, n);
  return p + n;
}

static inline char *put_i64(char *p, int64_t v) {
  if (v < 0) {
    *p++ = '-';
    return put_u64(p, (uint64_t)0 - (uint64_t)v);
  }
  return put_u64(p, (uint64_t)v);
}

/* Exactly `width` digits of v (0 <= v < 10^width). */
static inline char *put_fixed(char *p, uint64_t v, int width) {
  for (int i = width - 1; i >= 0; i--) {
    p[i] = (char)('0' + v % 10);
    v /= 10;
  }
  return p + width;
}

static inline char *put_2(char *p, unsigned v) {
  memcpy(p, DIGITS2 + 2 * v, 2);
  return p + 2;
}

static inline char *put_lit(char *p, const char *s, size_t n) {
  memcpy(p, s, n);
  return p + n;
}

/* ---- floats --------------------------------------------------------------------------- */
static double half_to_double(uint16_t h) {
  int sign = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v;
  if (e == 0)
    v = ldexp((double)m, -24);
  else if (e == 31)
    v = m ? NAN : INFINITY;
  else
    v = ldexp((double)(m + 1024), e - 25);
  return sign ? -v : v;
}

/* Round-to-nearest-even double → binary16 bits. */
static uint16_t double_to_half(double d) {
  uint16_t sign = signbit(d) ? 0x8000 : 0;
  double a = fabs(d);
  if (isnan(d)) return sign | 0x7e00;
  if (a >= 65520.0) return sign | 0x7c00;
  if (a <= 0x1p-25) return sign;
  int e;
  frexp(a, &e);
  int qexp = e - 11;
  if (qexp < -24) qexp = -24;
  uint32_t r = (uint32_t)nearbyint(ldexp(a, -qexp));
  if (qexp == -24) return sign | (uint16_t)r; /* subnormal, or 1024 = smallest normal */
  if (r == 2048) {
    r = 1024;
    qexp++;
  }
  int be = qexp + 25;
  if (be >= 31) return sign | 0x7c00;
  return sign | (uint16_t)((be << 10) | (r - 1024));
}

/* Lays out digits d[0..k) × 10^(n-k) (no leading/trailing zeros) the way ECMAScript
 * Number.prototype.toString does. */
static char *layout_number(char *p, bool neg, const char *d, int k, int n) {
  if (neg) *p++ = '-';
  if (k <= n && n <= 21) {
    p = put_lit(p, d, (size_t)k);
    for (int i = k; i < n; i++) *p++ = '0';
  } else if (0 < n && n <= 21) {
    p = put_lit(p, d, (size_t)n);
    *p++ = '.';
    p = put_lit(p, d + n, (size_t)(k - n));
  } else if (-6 < n && n <= 0) {
    *p++ = '0';
    *p++ = '.';
    for (int i = 0; i < -n; i++) *p++ = '0';
    p = put_lit(p, d, (size_t)k);
  } else {
    *p++ = d[0];
    if (k > 1) {
      *p++ = '.';
      p = put_lit(p, d + 1, (size_t)(k - 1));
    }
    *p++ = 'e';
    int e = n - 1;
    *p++ = e < 0 ? '-' : '+';
    p = put_u64(p, (uint64_t)(e < 0 ? -e : e));
  }
  return p;
}

/* Renders x with prec significant digits as "%.*e" does, except that an exact tie is
 * rounded away from zero, as ECMAScript's toPrecision does ("pick the larger n"); printf
 * rounds ties to even, which would print float32 322.828125 as 322.82812, not 322.82813. */
static void render(double x, int prec, char *buf, size_t cap) {
  snprintf(buf, cap, "%.*e", prec - 1, x);
  char wide[80];
  snprintf(wide, sizeof wide, "%.*e", prec + 24, x);
  /* wide: [-]d.ddd...e±XX; digit prec (0-based, counting significant digits) decides. */
  const char *w = wide + (wide[0] == '-');
  char digs[64];
  int k = 0;
  for (; *w && *w != 'e' && k < 63; w++)
    if (*w != '.') digs[k++] = *w;
  if (k <= prec || digs[prec] != '5') return;
  for (int i = prec + 1; i < k; i++)
    if (digs[i] != '0') return;
  /* Exact tie. If printf rounded down (its last digit equals the truncated digit), round up. */
  const char *b = buf + (buf[0] == '-');
  char last = 0;
  for (const char *q = b; *q && *q != 'e'; q++)
    if (*q != '.') last = *q;
  if (last != digs[prec - 1]) return;
  /* Increment the mantissa digits of buf in place, carrying; 9.99e5 -> 1.00e6. */
  char *e = strchr(buf, 'e');
  char *q = e - 1;
  for (;;) {
    if (*q == '.') {
      q--;
      continue;
    }
    if (*q == '9') {
      *q = '0';
      if (q == buf + (buf[0] == '-')) break;
      q--;
      continue;
    }
    (*q)++;
    return;
  }
  /* Carried out of the first digit: mantissa is 0.00..; make it 1.00.. and bump the exponent. */
  *q = '1';
  int ex = (int)strtol(e + 1, NULL, 10) + 1;
  snprintf(e, cap - (size_t)(e - buf), "e%+03d", ex);
}

/* Does the p-significant-digit rendering of x read back as the same value of width bits? */
static bool round_trips(double x, int bits, uint16_t hbits, int prec, char *buf, size_t cap) {
  render(x, prec, buf, cap);
  if (bits == 64) return strtod(buf, NULL) == x;
  if (bits == 32) return strtof(buf, NULL) == (float)x;
  return double_to_half(strtod(buf, NULL)) == hbits;
}

/* The same search as put_shortest below, in exact 128-bit integer arithmetic instead of
 * snprintf/strtod (which cost microseconds per value), for normal values with
 * 1e-5 <= |x| < 2^63 (every intermediate then fits in 127 bits; float16 subnormals excluded). x = m * 2^e exactly with
 * m of mbits bits; the p-digit candidate D * 10^(E10+1-p) is printf's correctly rounded
 * (half-even) one, and it round-trips when it lies within half an ulp of x (ties allowed
 * for even m, like strtod's round-half-even). Returns false outside that range. */
typedef unsigned __int128 u128;

static const u128 POW10_U128[39] = {
    (u128)1ULL,
    (u128)10ULL,
    (u128)100ULL,
    (u128)1000ULL,
    (u128)10000ULL,
    (u128)100000ULL,
    (u128)1000000ULL,
    (u128)10000000ULL,
    (u128)100000000ULL,
    (u128)1000000000ULL,
    (u128)10000000000ULL,
    (u128)100000000000ULL,
    (u128)1000000000000ULL,
    (u128)10000000000000ULL,
    (u128)100000000000000ULL,
    (u128)1000000000000000ULL,
    (u128)10000000000000000ULL,
    (u128)100000000000000000ULL,
    (u128)1000000000000000000ULL,
    (u128)10000000000000000000ULL,
    (u128)10000000000000000000ULL * 10ULL,
    (u128)10000000000000000000ULL * 100ULL,
    (u128)10000000000000000000ULL * 1000ULL,
    (u128)10000000000000000000ULL * 10000ULL,
    (u128)10000000000000000000ULL * 100000ULL,
    (u128)10000000000000000000ULL * 1000000ULL,
    (u128)10000000000000000000ULL * 10000000ULL,
    (u128)10000000000000000000ULL * 100000000ULL,
    (u128)10000000000000000000ULL * 1000000000ULL,
    (u128)10000000000000000000ULL * 10000000000ULL,
    (u128)10000000000000000000ULL * 100000000000ULL,
    (u128)10000000000000000000ULL * 1000000000000ULL,
    (u128)10000000000000000000ULL * 10000000000000ULL,
    (u128)10000000000000000000ULL * 100000000000000ULL,
    (u128)10000000000000000000ULL * 1000000000000000ULL,
    (u128)10000000000000000000ULL * 10000000000000000ULL,
    (u128)10000000000000000000ULL * 100000000000000000ULL,
    (u128)10000000000000000000ULL * 1000000000000000000ULL,
    (u128)10000000000000000000ULL * 10000000000000000000ULL,
};
static inline u128 pow10_u128(int k) { return POW10_U128[k]; }

static bool shortest_fast(double a, int mbits, int p0, int maxp, char *dig, int *nd, int *n10) {
  if (!(a >= 1e-5 && a < 0x1p63) || (mbits == 11 && a <= 0x1p-14)) return false; /* f16 subnormal */
  int e2;
  double f = frexp(a, &e2);
  uint64_t m = (uint64_t)ldexp(f, mbits);
  int e = e2 - mbits;
  int s = e < 0 ? -e : 0, eu = e > 0 ? e : 0;
  bool pow2 = m == (uint64_t)1 << (mbits - 1); /* lower neighbour is half an ulp closer */
  int E10 = (int)floor(log10(a));
  for (int p = p0; p <= maxp; p++) {
    /* exponent from the truncated value, so 10^E10 <= a < 10^(E10+1) exactly */
    u128 D = 0, rem = 0, Dn = 0;
    for (int tries = 0;; tries++) {
      if (tries == 3) return false;
      int k = p - 1 - E10;
      u128 N = (u128)m << eu;
      Dn = (u128)1 << s;
      if (k >= 0)
        N *= pow10_u128(k);
      else
        Dn *= pow10_u128(-k);
      D = N / Dn;
      rem = N - D * Dn;
      if (D >= pow10_u128(p))
        E10++;
      else if (D < pow10_u128(p - 1))
        E10--;
      else
        break;
    }
    /* round half even for float64 (Number.prototype.toString picks the even digit), half
     * up for float32/16 (the toPrecision reading the fixture generator uses) */
    if (2 * rem > Dn || (2 * rem == Dn && (mbits != 53 || (D & 1)))) D++;
    int E10r = E10; /* exponent of the rounded candidate */
    if (D == pow10_u128(p)) {
      D /= 10;
      E10r++;
    }
    int k = p - 1 - E10r;
    /* |D*10^-k - a| against half an ulp, everything multiplied by 2^s * 10^max(k,0) */
    u128 c, x, ulp2; /* candidate, value, ulp (in the same scale) */
    if (k >= 0) {
      c = D << s;
      x = ((u128)m << eu) * pow10_u128(k);
      ulp2 = ((u128)1 << eu) * pow10_u128(k);
    } else {
      c = (D * pow10_u128(-k)) << s;
      x = (u128)m << eu;
      ulp2 = (u128)1 << eu;
    }
    bool ok;
    if (c >= x)
      ok = 2 * (c - x) < ulp2 || (2 * (c - x) == ulp2 && !(m & 1));
    else if (pow2)
      ok = 4 * (x - c) < ulp2 || (4 * (x - c) == ulp2 && !(m & 1));
    else
      ok = 2 * (x - c) < ulp2 || (2 * (x - c) == ulp2 && !(m & 1));
    if (!ok && pow2 && mbits == 53 && c < x) { /* toString: the wider upper half may hold the next one up */
      u128 c2 = c + (k >= 0 ? (u128)1 << s : pow10_u128(-k) << s);
      if (2 * (c2 - x) < ulp2 || (2 * (c2 - x) == ulp2 && !(m & 1))) {
        ok = true;
        if (++D == pow10_u128(p)) {
          D /= 10;
          E10r++;
        }
      }
    }
    if (!ok) continue;
    char tmp[40];
    int len = 0;
    while (D) {
      tmp[len++] = (char)('0' + (unsigned)(D % 10));
      D /= 10;
    }
    int first = 0;
    while (first < len - 1 && tmp[first] == '0') first++; /* trailing zeros */
    *nd = 0;
    for (int i = len - 1; i >= first; i--) dig[(*nd)++] = tmp[i];
    *n10 = E10r + 1;
    return true;
  }
  return false;
}

/* x is finite and non-zero. Finds the fewest significant digits whose correctly rounded
 * rendering reads back as x. For normal numbers at most one decimal of P0 digits (15 for
 * float64, 6 for float32, 3 for float16) lies in x's rounding interval, so if the P0-digit
 * rendering reads back, its digits without trailing zeros are the shortest, and otherwise
 * the first P > P0 that reads back is: one snprintf/strtod pair per candidate length,
 * usually one or two. Subnormals (wide intervals) use a binary search over 1..max. */
static char *put_shortest_slow(char *p, double x, int bits, uint16_t hbits) {
  char buf[40];
  int maxp = bits == 64 ? 17 : bits == 32 ? 9
                                          : 5;
  double min_normal = bits == 64 ? 0x1p-1022 : bits == 32 ? 0x1p-126
                                                          : 0x1p-14;
  int lo;
  if (fabs(x) >= min_normal) {
    lo = bits == 64 ? 15 : bits == 32 ? 6
                                      : 3;
    while (lo < maxp && !round_trips(x, bits, hbits, lo, buf, sizeof buf)) lo++;
    if (lo == maxp) snprintf(buf, sizeof buf, "%.*e", lo - 1, x);
  } else {
    int hi = maxp, cur = -1; /* cur: the precision buf holds */
    lo = 1;
    while (lo < hi) {
      int mid = (lo + hi) / 2;
      cur = mid;
      if (round_trips(x, bits, hbits, mid, buf, sizeof buf))
        hi = mid;
      else
        lo = mid + 1;
    }
    if (cur != lo) snprintf(buf, sizeof buf, "%.*e", lo - 1, x);
  }
  int fe;
  if (bits == 64 && fabs(x) >= min_normal && frexp(x, &fe) == (x < 0 ? -0.5 : 0.5)) {
    /* A power of two: its rounding interval reaches twice as far up as down, so a shorter
     * decimal just above x may read back too (Number.prototype.toString finds it). */
    for (int q = lo - 1; q >= 1; q--) {
      char up[40];
      snprintf(up, sizeof up, "%.*e", q - 1, x);
      char *e = strchr(up, 'e');
      int i = (int)(e - up) - 1;
      while (i >= 0 && (up[i] == '9' || up[i] == '.' || up[i] == '-')) {
        if (up[i] == '9') up[i] = '0';
        i--;
      }
      if (i < 0) break; /* 9.99e+N rounding up to 1e+N+1: rare, leave it */
      up[i]++;
      if (strtod(up, NULL) != x) break;
      memcpy(buf, up, sizeof up);
    }
  }
  /* buf: [-]d[.ddd]e±XX */
  const char *s = buf;
  bool neg = false;
  if (*s == '-') {
    neg = true;
    s++;
  }
  char d[24];
  int k = 0;
  for (; *s && *s != 'e'; s++)
    if (*s != '.') d[k++] = *s;
  int e = (int)strtol(s + 1, NULL, 10);
  while (k > 1 && d[k - 1] == '0') k--;
  return layout_number(p, neg, d, k, e + 1);
}

static char *put_shortest(char *p, double x, int bits, uint16_t hbits) {
  char d[40];
  int k, n;
  int mbits = bits == 64 ? 53 : bits == 32 ? 24
                                           : 11,
      maxp = bits == 64 ? 17 : bits == 32 ? 9
                                          : 5;
  if (shortest_fast(fabs(x), mbits, bits == 64 ? 15 : bits == 32 ? 6
                                                                 : 3,
                    maxp, d, &k, &n))
    return layout_number(p, x < 0, d, k, n);
  return put_shortest_slow(p, x, bits, hbits);
}

/* Writes a float value of the given width (64/32/16); x is its exact double value. */
static char *put_float(char *p, double x, int bits, uint16_t hbits) {
  if (isnan(x)) return put_lit(p, "\"NaN\"", 5);
  if (isinf(x)) return x > 0 ? put_lit(p, "\"Infinity\"", 10) : put_lit(p, "\"-Infinity\"", 11);
  if (x == 0) return signbit(x) ? put_lit(p, "-0", 2) : put_lit(p, "0", 1);
  /* Below 2^(mantissa bits) an integral value's own digits are its shortest form. */
  double exact = bits == 64 ? 0x1p53 : bits == 32 ? 0x1p24
                                                  : 0x1p11;
  if (fabs(x) < exact && x == trunc(x)) return put_i64(p, (int64_t)x);
  return put_shortest(p, x, bits, hbits);
}

/* ---- dates and times ------------------------------------------------------------------ */
static inline int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

static char *put_date(char *p, int64_t z) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = yoe + era * 400;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  unsigned d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
  unsigned m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
  if (m <= 2) y++;
  if (y >= 0 && y <= 9999) {
    p = put_fixed(p, (uint64_t)y, 4);
  } else {
    *p++ = y < 0 ? '-' : '+';
    uint64_t ay = y < 0 ? (uint64_t)0 - (uint64_t)y : (uint64_t)y;
    if (ay < 1000000)
      p = put_fixed(p, ay, 6);
    else
      p = put_u64(p, ay);
  }
  *p++ = '-';
  p = put_2(p, m);
  *p++ = '-';
  return put_2(p, d);
}

static const int64_t UNIT_PER_SEC[4] = {1, 1000, 1000000, 1000000000};
static const int UNIT_DIGITS[4] = {0, 3, 6, 9};

/* HH:MM:SS[.fff] from seconds-of-day and the sub-second fraction in `unit`. */
static char *put_clock(char *p, int64_t sod, int64_t frac, int unit) {
  p = put_2(p, (unsigned)(sod / 3600));
  *p++ = ':';
  p = put_2(p, (unsigned)(sod / 60 % 60));
  *p++ = ':';
  p = put_2(p, (unsigned)(sod % 60));
  if (unit) {
    *p++ = '.';
    p = put_fixed(p, (uint64_t)frac, UNIT_DIGITS[unit]);
  }
  return p;
}

static char *put_timestamp(char *p, int64_t v, int unit, const struct jnode *n) {
  int64_t per = UNIT_PER_SEC[unit];
  int64_t secs = floor_div(v, per), frac = v - secs * per;
  bool off = n->tz_mode == TZ_OFFSET;
  if (off && __builtin_add_overflow(secs, (int64_t)n->tz_secs, &secs)) off = false;
  int64_t days = floor_div(secs, 86400), sod = secs - days * 86400;
  *p++ = '"';
  p = put_date(p, days);
  *p++ = 'T';
  p = put_clock(p, sod, frac, unit);
  if (off)
    p = put_lit(p, n->tz_text, 6);
  else
    *p++ = 'Z';
  *p++ = '"';
  return p;
}

/* ---- decimals --------------------------------------------------------------------------- */
/* Little-endian two's complement integer of `bits` at src → exact decimal with `scale`.
 * Digits come from repeated division by 10^9 of the magnitude, least significant first. */
int lnc_decimal_format(const void *value, int bits, int32_t scale, char *out, size_t cap) {
  if (!value || !out || (bits != 32 && bits != 64 && bits != 128 && bits != 256) || scale < LNC_DECIMAL_MIN_SCALE ||
      scale > LNC_DECIMAL_MAX_SCALE || cap < LNC_DECIMAL_STR_MAX)
    return -1;
  uint32_t w[8];
  int nw = bits / 32;
  memcpy(w, value, (size_t)nw * 4);
  bool neg = (w[nw - 1] >> 31) != 0;
  if (neg) { /* negate: invert and add one */
    uint64_t carry = 1;
    for (int i = 0; i < nw; i++) {
      uint64_t s = (uint64_t)(uint32_t)~w[i] + carry;
      w[i] = (uint32_t)s;
      carry = s >> 32;
    }
  }
  char dig[80]; /* 2^255 has 77 digits */
  int nd = 0;
  int top = nw;
  while (top > 0 && w[top - 1] == 0) top--;
  while (top > 0) {
    uint64_t rem = 0;
    for (int i = top - 1; i >= 0; i--) {
      uint64_t cur = (rem << 32) | w[i];
      w[i] = (uint32_t)(cur / 1000000000u);
      rem = cur % 1000000000u;
    }
    while (top > 0 && w[top - 1] == 0) top--;
    for (int j = 0; j < 9 && (top > 0 || rem); j++) {
      dig[nd++] = (char)('0' + rem % 10);
      rem /= 10;
    }
  }
  if (nd == 0) dig[nd++] = '0';
  /* At most 1 + 77 + 2 + 128 characters and the NUL: within LNC_DECIMAL_STR_MAX. */
  char *p = out;
  if (neg) *p++ = '-';
  if (scale <= 0) {
    for (int i = nd - 1; i >= 0; i--) *p++ = dig[i];
    if (nd > 1 || dig[0] != '0')
      for (int32_t i = 0; i < -scale; i++) *p++ = '0';
  } else if (nd <= scale) {
    *p++ = '0';
    *p++ = '.';
    for (int32_t i = nd; i < scale; i++) *p++ = '0';
    for (int i = nd - 1; i >= 0; i--) *p++ = dig[i];
  } else {
    for (int i = nd - 1; i >= scale; i--) *p++ = dig[i];
    *p++ = '.';
    for (int i = scale - 1; i >= 0; i--) *p++ = dig[i];
  }
  *p = 0;
  return (int)(p - out);
}

/* ---- strings and binary ------------------------------------------------------------------ */
/* 0: copy as is; 1: \u00XX; 2: the start of a UTF-8 sequence, copied whole when valid and
 * replaced by U+FFFD when not (a damaged file's "utf8" column is not trusted); otherwise the
 * character after a backslash. */
static const uint8_t ESC[256] = {
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    'b',
    't',
    'n',
    1,
    'f',
    'r',
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    0,
    0,
    '"',
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    '\\',
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    /* 0x80-0xFF: checked as UTF-8 (2), copied when valid, else U+FFFD */
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
    2,
};

static int put_string(struct lnc_buf *o, const uint8_t *s, size_t n) {
  size_t i = 0;
  while (i < n && !ESC[s[i]]) i++;
  if (i == n) {
    NEED(o, n + 2);
    char *p = (char *)o->data + o->len;
    *p++ = '"';
    memcpy(p, s, n);
    p[n] = '"';
    o->len += n + 2;
    return 0;
  }
  if (n > (SIZE_MAX - 2) / 6) return LNC_ENOMEM;
  NEED(o, 6 * n + 2);
  char *p = (char *)o->data + o->len;
  *p++ = '"';
  memcpy(p, s, i);
  p += i;
  static const char hex[] = "0123456789abcdef";
  for (; i < n; i++) {
    uint8_t c = s[i], e = ESC[c];
    if (!e) {
      *p++ = (char)c;
    } else if (e == 2) {
      size_t k = lnc_utf8_seq(s + i, n - i);
      if (k) {
        memcpy(p, s + i, k);
        p += k;
        i += k - 1;
      } else {
        memcpy(p, LNC_JSON_REPLACEMENT, 6);
        p += 6;
      }
    } else if (e == 1) {
      memcpy(p, "\\u00", 4);
      p[4] = hex[c >> 4];
      p[5] = hex[c & 15];
      p += 6;
    } else {
      *p++ = '\\';
      *p++ = (char)e;
    }
  }
  *p++ = '"';
  o->len = (size_t)((uint8_t *)p - o->data);
  return 0;
}

static int put_base64(struct lnc_buf *o, const uint8_t *s, size_t n) {
  static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (n > SIZE_MAX / 2) return LNC_ENOMEM;
  NEED(o, (n + 2) / 3 * 4 + 2);
  char *p = (char *)o->data + o->len;
  *p++ = '"';
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
    p[0] = B64[v >> 18];
    p[1] = B64[(v >> 12) & 63];
    p[2] = B64[(v >> 6) & 63];
    p[3] = B64[v & 63];
    p += 4;
  }
  if (n - i == 1) {
    uint32_t v = (uint32_t)s[i] << 16;
    p[0] = B64[v >> 18];
    p[1] = B64[(v >> 12) & 63];
    p[2] = p[3] = '=';
    p += 4;
  } else if (n - i == 2) {
    uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;
    p[0] = B64[v >> 18];
    p[1] = B64[(v >> 12) & 63];
    p[2] = B64[(v >> 6) & 63];
    p[3] = '=';
    p += 4;
  }
  *p++ = '"';
  o->len = (size_t)((uint8_t *)p - o->data);
  return 0;
}

/* ---- values ------------------------------------------------------------------------------ */
static inline int64_t read_int(const void *buf, int bits, bool is_signed, int64_t i) {
  switch (bits) {
  case 8: return is_signed ? ((const int8_t *)buf)[i] : ((const uint8_t *)buf)[i];
  case 16: return is_signed ? ((const int16_t *)buf)[i] : ((const uint16_t *)buf)[i];
  case 32: return is_signed ? ((const int32_t *)buf)[i] : (int64_t)((const uint32_t *)buf)[i];
  default: return ((const int64_t *)buf)[i];
  }
}

static inline bool bit_get(const void *bits, int64_t i) {
  return (((const uint8_t *)bits)[i >> 3] >> (i & 7)) & 1;
}

static int corrupt(struct jctx *c, const char *what, int64_t a, int64_t b) {
  return lnc_errf(c->err, LNC_EINVAL, "arrow array: %s (%lld, %lld)", what, (long long)a,
                  (long long)b);
}

static int put_value(struct jctx *c, const struct jnode *n, int64_t i);

/* Dates, times, timestamps and durations at physical index j, written at p (room checked by
 * the caller: 64 bytes); returns the end. */
static char *put_temporal(char *p, const struct jnode *n, const void *b1, int64_t j) {
  switch (n->t.kind) {
  case LNC_AT_DURATION: return put_i64(p, ((const int64_t *)b1)[j]);
  case LNC_AT_DATE32:
    *p++ = '"';
    p = put_date(p, ((const int32_t *)b1)[j]);
    *p++ = '"';
    return p;
  case LNC_AT_DATE64: {
    int64_t v = ((const int64_t *)b1)[j];
    if (v % 86400000 != 0) return put_timestamp(p, v, LNC_TU_MS, n); /* not whole days */
    *p++ = '"';
    p = put_date(p, v / 86400000);
    *p++ = '"';
    return p;
  }
  case LNC_AT_TIMESTAMP: return put_timestamp(p, ((const int64_t *)b1)[j], n->t.unit, n);
  default: { /* LNC_AT_TIME: the time of day */
    int64_t v = n->t.bits == 32 ? ((const int32_t *)b1)[j] : ((const int64_t *)b1)[j];
    int64_t per = UNIT_PER_SEC[n->t.unit];
    int64_t secs = floor_div(v, per), frac = v - secs * per;
    secs -= floor_div(secs, 86400) * 86400;
    *p++ = '"';
    p = put_clock(p, secs, frac, n->t.unit);
    *p++ = '"';
    return p;
  }
  }
}

/* A fixed-width scalar at physical index j: bool, integer, float, decimal or temporal. The
 * hot path of the encoder: one room check, then digits written in place. */
static int put_scalar(struct jctx *c, const struct jnode *n, int64_t j) {
  struct lnc_buf *o = c->out;
  const void *b1 = n->a->n_buffers > 1 ? n->a->buffers[1] : NULL;
  char *p;
  switch (n->t.kind) {
  case LNC_AT_BOOL:
    NEED(o, 5);
    p = (char *)o->data + o->len;
    p = bit_get(b1, j) ? put_lit(p, "true", 4) : put_lit(p, "false", 5);
    break;
  case LNC_AT_INT:
    NEED(o, 24);
    p = (char *)o->data + o->len;
    if (n->t.bits == 64 && !n->t.is_signed)
      p = put_u64(p, ((const uint64_t *)b1)[j]);
    else
      p = put_i64(p, read_int(b1, n->t.bits, n->t.is_signed, j));
    break;
  case LNC_AT_FLOAT:
    NEED(o, 40);
    p = (char *)o->data + o->len;
    if (n->t.bits == 64)
      p = put_float(p, ((const double *)b1)[j], 64, 0);
    else if (n->t.bits == 32)
      p = put_float(p, ((const float *)b1)[j], 32, 0);
    else {
      uint16_t h = ((const uint16_t *)b1)[j];
      p = put_float(p, half_to_double(h), 16, h);
    }
    break;
  case LNC_AT_DECIMAL:
    NEED(o, LNC_DECIMAL_STR_MAX + 2);
    p = (char *)o->data + o->len;
    *p++ = '"';
    p += lnc_decimal_format((const uint8_t *)b1 + (size_t)j * (size_t)(n->t.bits / 8), n->t.bits, n->t.scale, p,
                            LNC_DECIMAL_STR_MAX); /* the type was parsed: bits and scale in range */
    *p++ = '"';
    break;
  case LNC_AT_DATE32:
  case LNC_AT_DATE64:
  case LNC_AT_TIMESTAMP:
  case LNC_AT_TIME:
  case LNC_AT_DURATION:
    NEED(o, 64);
    p = put_temporal((char *)o->data + o->len, n, b1, j);
    break;
  default:
    return lnc_errf(c->err, LNC_EINTERNAL, "json: unhandled type %d", (int)n->t.kind);
  }
  o->len = (size_t)((uint8_t *)p - o->data);
  return 0;
}

/* A string (JSON string) or binary (base64) value with 32- or 64-bit offsets. */
static int put_varbin(struct jctx *c, const struct jnode *n, int64_t j) {
  const struct ArrowArray *a = n->a;
  bool large = n->t.kind == LNC_AT_LARGE_UTF8 || n->t.kind == LNC_AT_LARGE_BINARY;
  int64_t s = large ? ((const int64_t *)a->buffers[1])[j] : ((const int32_t *)a->buffers[1])[j];
  int64_t e = large ? ((const int64_t *)a->buffers[1])[j + 1] : ((const int32_t *)a->buffers[1])[j + 1];
  if (s < 0 || e < s) return corrupt(c, "bad offsets", s, e);
  const uint8_t *d = (const uint8_t *)a->buffers[2] + s;
  bool text = n->t.kind == LNC_AT_UTF8 || n->t.kind == LNC_AT_LARGE_UTF8;
  return text ? put_string(c->out, d, (size_t)(e - s)) : put_base64(c->out, d, (size_t)(e - s));
}

/* A list, large list or fixed-size list: its items as a JSON array. A map is its entries
 * as they are laid out, an array of {"key": k, "value": v} objects (docs/json-rows.md): keys
 * need not be strings, nor distinct. */
static int put_list(struct jctx *c, const struct jnode *n, int64_t j) {
  struct lnc_buf *o = c->out;
  int64_t s, e;
  /* A fixed-size list has only its validity buffer: buffers[1] exists for the other two. */
  if (n->t.kind == LNC_AT_LIST || n->t.kind == LNC_AT_MAP) {
    s = ((const int32_t *)n->a->buffers[1])[j];
    e = ((const int32_t *)n->a->buffers[1])[j + 1];
  } else if (n->t.kind == LNC_AT_LARGE_LIST) {
    s = ((const int64_t *)n->a->buffers[1])[j];
    e = ((const int64_t *)n->a->buffers[1])[j + 1];
  } else {
    s = j * n->t.width;
    e = s + n->t.width;
  }
  const struct jnode *ch = &n->children[0];
  if (s < 0 || e < s || e > ch->a->length) return corrupt(c, "bad list offsets", s, e);
  NEED(o, 2);
  o->data[o->len++] = '[';
  for (int64_t k = s; k < e; k++) {
    if (k > s) {
      NEED(o, 1);
      o->data[o->len++] = ',';
    }
    int rc = put_value(c, ch, k);
    if (rc) return rc;
  }
  NEED(o, 1);
  o->data[o->len++] = ']';
  return 0;
}

/* A struct: its children as a JSON object, keys precompiled. */
static int put_struct(struct jctx *c, const struct jnode *n, int64_t j) {
  struct lnc_buf *o = c->out;
  NEED(o, 2);
  o->data[o->len++] = '{';
  for (int64_t k = 0; k < n->nchildren; k++) {
    const struct jnode *ch = &n->children[k];
    NEED(o, ch->key_len + 1);
    if (k) o->data[o->len++] = ',';
    memcpy(o->data + o->len, ch->key, ch->key_len);
    o->len += ch->key_len;
    int rc = put_value(c, ch, j);
    if (rc) return rc;
  }
  NEED(o, 1);
  o->data[o->len++] = '}';
  return 0;
}

/* Writes the value at logical index i (before a->offset) of node n. */
static int put_value(struct jctx *c, const struct jnode *n, int64_t i) {
  struct lnc_buf *o = c->out;
  const struct ArrowArray *a = n->a;
  int64_t j = a->offset + i;
  if (n->t.kind == LNC_AT_NULL || (n->has_validity && !bit_get(a->buffers[0], j))) {
    NEED(o, 4);
    memcpy(o->data + o->len, "null", 4);
    o->len += 4;
    return 0;
  }
  if (n->dict) {
    int64_t k = read_int(a->buffers[1], n->t.bits, n->t.is_signed, j);
    if (k < 0 || k >= n->dict->a->length) return corrupt(c, "dictionary index out of range", k, n->dict->a->length);
    return put_value(c, n->dict, k);
  }
  switch (n->t.kind) {
  case LNC_AT_UTF8:
  case LNC_AT_BINARY:
  case LNC_AT_LARGE_UTF8:
  case LNC_AT_LARGE_BINARY:
    return put_varbin(c, n, j);
  case LNC_AT_FIXED_BINARY:
    return put_base64(o, (const uint8_t *)a->buffers[1] + (size_t)j * (size_t)n->t.width, (size_t)n->t.width);
  case LNC_AT_LIST:
  case LNC_AT_LARGE_LIST:
  case LNC_AT_MAP:
  case LNC_AT_FIXED_LIST:
    return put_list(c, n, j);
  case LNC_AT_STRUCT:
    return put_struct(c, n, j);
  default:
    return put_scalar(c, n, j);
  }
}

/* ---- schema compilation --------------------------------------------------------------------- */
static size_t count_nodes(const struct ArrowSchema *s) {
  size_t n = 1;
  if (s->dictionary) n += count_nodes(s->dictionary);
  for (int64_t i = 0; i < s->n_children; i++) n += count_nodes(s->children[i]);
  return n;
}

static void parse_tz(struct jnode *n) {
  const char *tz = n->t.tz;
  n->tz_mode = TZ_UTC;
  if (!tz || strlen(tz) != 6 || (tz[0] != '+' && tz[0] != '-') || tz[3] != ':') return;
  for (int i = 1; i < 6; i++)
    if (i != 3 && (tz[i] < '0' || tz[i] > '9')) return;
  int hh = (tz[1] - '0') * 10 + (tz[2] - '0'), mm = (tz[4] - '0') * 10 + (tz[5] - '0');
  if (hh > 23 || mm > 59 || (hh == 0 && mm == 0)) return; /* ±00:00 is UTC: written as Z */
  n->tz_mode = TZ_OFFSET;
  n->tz_secs = (hh * 3600 + mm * 60) * (tz[0] == '-' ? -1 : 1);
  memcpy(n->tz_text, tz, 6);
  n->tz_text[6] = 0;
}

static int compile(struct jctx *c, struct jnode *n, const struct ArrowSchema *s,
                   const struct ArrowArray *a) {
  int rc = lnc_arrow_parse_format(s->format, &n->t, c->err);
  if (rc) return rc;
  n->a = a;
  n->has_validity = n->t.kind != LNC_AT_NULL && a->null_count != 0 && a->buffers[0] != NULL;
  if (n->t.kind == LNC_AT_TIMESTAMP || n->t.kind == LNC_AT_DATE64) parse_tz(n);
  n->key_off = c->keys.len;
  const char *name = s->name ? s->name : "";
  if ((rc = lnc_buf_json_str(&c->keys, name, strlen(name))) || (rc = lnc_buf_putc(&c->keys, ':')))
    return rc;
  n->key_len = c->keys.len - n->key_off;
  if (s->dictionary) {
    struct jnode *d = &c->nodes[c->used++];
    n->dict = d;
    if ((rc = compile(c, d, s->dictionary, a->dictionary))) return rc;
  }
  n->nchildren = s->n_children;
  if (s->n_children) {
    n->children = &c->nodes[c->used];
    c->used += (size_t)s->n_children;
    for (int64_t i = 0; i < s->n_children; i++)
      if ((rc = compile(c, &n->children[i], s->children[i], a->children[i]))) return rc;
  }
  return 0;
}

static void resolve_keys(struct jctx *c) {
  for (size_t i = 0; i < c->used; i++) c->nodes[i].key = (const char *)c->keys.data + c->nodes[i].key_off;
}

int lnc_encode_json(const struct ArrowSchema *schema, const struct ArrowArray *array,
                    struct lnc_buf *out, struct lnc_error *err) {
  return lnc_encode_json_max(schema, array, 0, out, err);
}

int lnc_encode_json_max(const struct ArrowSchema *schema, const struct ArrowArray *array, size_t max_len,
                        struct lnc_buf *out, struct lnc_error *err) {
  int rc = lnc_arrow_validate(schema, array, err);
  if (rc) return rc;
  if (strcmp(schema->format, "+s") != 0 || schema->dictionary)
    return lnc_errf(err, LNC_EINVAL, "json: record batch must be a struct array, got \"%s\"",
                    schema->format);
  struct jctx c = {.out = out, .err = err};
  c.nnodes = count_nodes(schema);
  c.nodes = calloc(c.nnodes, sizeof *c.nodes);
  if (!c.nodes) return lnc_errf(err, LNC_ENOMEM, "json: out of memory");
  c.used = 1;
  size_t start = out->len;
  rc = compile(&c, &c.nodes[0], schema, array);
  if (rc) goto done;
  resolve_keys(&c);

  const struct jnode *root = &c.nodes[0];
  int64_t nrows = array->length;
  if ((rc = lnc_buf_reserve(out, 64 + c.keys.len))) goto done;
  {
    char *p = (char *)out->data + out->len;
    p = put_lit(p, "{\"num_rows\":", 12);
    p = put_i64(p, nrows);
    p = put_lit(p, ",\"columns\":[", 12);
    for (int64_t k = 0; k < root->nchildren; k++) {
      if (k) *p++ = ',';
      p = put_lit(p, root->children[k].key, root->children[k].key_len - 1);
    }
    p = put_lit(p, "],\"rows\":[", 10);
    out->len = (size_t)((uint8_t *)p - out->data);
  }
  for (int64_t r = 0; r < nrows; r++) {
    if (r && (rc = lnc_buf_putc(out, ','))) goto done;
    if ((rc = lnc_buf_putc(out, '{'))) goto done;
    int64_t j = array->offset + r;
    for (int64_t k = 0; k < root->nchildren; k++) {
      const struct jnode *ch = &root->children[k];
      if (out->cap - out->len < ch->key_len + 1 && (rc = lnc_buf_reserve(out, ch->key_len + 1)))
        goto done;
      if (k) out->data[out->len++] = ',';
      memcpy(out->data + out->len, ch->key, ch->key_len);
      out->len += ch->key_len;
      if ((rc = put_value(&c, ch, j))) goto done;
    }
    if ((rc = lnc_buf_putc(out, '}'))) goto done;
    /* Checked a row at a time: a boolean is a bit in Arrow and 6 bytes here, a control
     * character one byte and six, so the body can be tens of times the take's own bound. */
    if (max_len && out->len - start > max_len) {
      rc = lnc_errf(err, LNC_ELIMIT, "json: the body passes %zu bytes at row %lld of %lld", max_len, (long long)r + 1,
                    (long long)nrows);
      goto done;
    }
  }
  rc = lnc_buf_append(out, "]}", 2);
done:
  if (rc) {
    out->len = start;
    if (rc == LNC_ENOMEM) lnc_errf(err, LNC_ENOMEM, "json: out of memory");
  }
  lnc_buf_free(&c.keys);
  free(c.nodes);
  return rc;
}
