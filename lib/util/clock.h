/* Time as the library and the programs measure it: CLOCK_MONOTONIC (never steps back when
 * the wall clock is set), one definition for deadlines, ages and benchmark intervals. */
#ifndef LNC_UTIL_CLOCK_H
#define LNC_UTIL_CLOCK_H
#include <stdint.h>
#include <time.h>

/* Monotonic seconds (a vDSO read, no system call). */
static inline double lnc_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Monotonic nanoseconds at the clock tick's grain (CLOCK_MONOTONIC_COARSE, a few ms): for
 * ages of cached answers checked on every take, where a vDSO read of the fine clock is the
 * cost to avoid. */
static inline uint64_t lnc_coarse_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* xorshift64 (Marsaglia, shifts 13, 7, 17): the benchmarks' cheap random sequence, the same
 * for the same (nonzero) seed. Not for anything an attacker may predict. */
static inline uint64_t lnc_xorshift64(uint64_t *s) {
  uint64_t x = *s;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *s = x;
}

#endif
